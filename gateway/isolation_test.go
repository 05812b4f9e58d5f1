package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// TestIsolation_NoToolCrossesThreadsOrRequests runs many conversations at once, each
// with its own tools and thread. The scripted engine obeys the user ("load gNN_tool_K",
// sometimes naming another conversation's tool); every request the engine sees may
// carry only the meta-tools and tools of its own conversation.
func TestIsolation_NoToolCrossesThreadsOrRequests(t *testing.T) {
	const workers, turns = 12, 4
	var mu sync.Mutex
	var violations []string
	ownSeen := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		owner := strings.Fields(req.Messages[0].Content)[2] // "I am gNN"
		for _, tl := range req.Tools {
			n := tl.Function.Name
			if strings.HasPrefix(n, owner+"_") {
				mu.Lock()
				ownSeen++
				mu.Unlock()
			}
			if n != "search_tools" && n != "load_tool" && !strings.HasPrefix(n, owner+"_") {
				mu.Lock()
				violations = append(violations, fmt.Sprintf("%s saw %s", owner, n))
				mu.Unlock()
			}
		}
		last := req.Messages[len(req.Messages)-1]
		w.Header().Set("Content-Type", "application/json")
		if last.Role == "user" {
			target := strings.TrimPrefix(last.Content, "load ")
			fmt.Fprint(w, callReply("c", "load_tool", `{"toolName":"`+target+`"}`))
			return
		}
		fmt.Fprint(w, `{"id":"r","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		State:     state.NewMemory(state.Options{}),
	}))
	defer srv.Close()

	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("g%02d", g)
			var tools []string
			for k := range 22 {
				tools = append(tools, fmt.Sprintf(`{"type":"function","function":{"name":"%s_tool_%02d","description":"tool %d of %s"}}`, owner, k, k, owner))
			}
			msgs := `{"role":"system","content":"I am ` + owner + `"}`
			for turn := range turns {
				target := fmt.Sprintf("%s_tool_%02d", owner, turn)
				if turn == 2 { // try to reach another conversation's tool
					target = fmt.Sprintf("g%02d_tool_00", (g+1)%workers)
				}
				msgs += `,{"role":"user","content":"load ` + target + `"}`
				body := `{"model":"m","messages":[` + msgs + `],"tools":[` + strings.Join(tools, ",") + `]}`
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("X-Thread-Id", owner)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("%s turn %d: status %d", owner, turn, resp.StatusCode)
				}
				msgs += `,{"role":"assistant","content":"ok"}`
			}
		}()
	}
	wg.Wait()
	if ownSeen == 0 {
		t.Fatal("no conversation ever saw its own loaded tools: the test proves nothing")
	}
	if len(violations) > 0 {
		t.Errorf("%d tools crossed conversations, e.g. %v", len(violations), violations[:min(5, len(violations))])
	}
}
