package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// agentTools is an agent's own tools array of n functions, in the door's shape.
func agentTools(n int, anthropic bool) string {
	var out []string
	for i := range n {
		if anthropic {
			out = append(out, fmt.Sprintf(`{"name":"Tool%02d","description":"core tool %d","input_schema":{"type":"object"}}`, i, i))
		} else {
			out = append(out, fmt.Sprintf(`{"type":"function","function":{"name":"Tool%02d","description":"core tool %d","parameters":{"type":"object"}}}`, i, i))
		}
	}
	return "[" + strings.Join(out, ",") + "]"
}

// postDoor sends body to path with header set, and returns the answer.
func postDoor(t *testing.T, url, path, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// TestClientTools_CallableFromTheFirstTurn: 24 tools a client sends without deferring any
// reach the engine as they are, every one callable, with no meta-tools, through Chat
// Completions and Messages alike — unless the profile or the request's
// X-Maskgate-Client-Tools says managed, when they sit behind search_tools as before.
func TestClientTools_CallableFromTheFirstTurn(t *testing.T) {
	chat := `{"model":"m1","messages":[{"role":"user","content":"hi"}],"tools":` + agentTools(24, false) + `}`
	msgs := `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":` + agentTools(24, true) + `}`
	for _, tc := range []struct {
		name        string
		profile     string // Options.ClientTools
		header      string
		path, body  string
		wantManaged bool
	}{
		{"chat default", "", "", "/v1/chat/completions", chat, false},
		{"chat profile managed", gateway.ClientToolsManaged, "", "/v1/chat/completions", chat, true},
		{"chat header managed", "", gateway.ClientToolsManaged, "/v1/chat/completions", chat, true},
		{"chat header callable over a managed profile", gateway.ClientToolsManaged, gateway.ClientToolsCallable, "/v1/chat/completions", chat, false},
		{"messages default", "", "", "/v1/messages", msgs, false},
		{"messages profile managed", gateway.ClientToolsManaged, "", "/v1/messages", msgs, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, replyJSON(200, completionJSON))
			g := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
				o.State = state.NewMemory(state.Options{})
				o.Strategy = gateway.StrategyRemove
				o.ClientTools = tc.profile
			})
			h := map[string]string{}
			if tc.header != "" {
				h[gateway.HeaderClientTools] = tc.header
			}
			resp, body := postDoor(t, g.URL, tc.path, tc.body, h)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			names := engineToolNames(t, up.lastBody())
			managed := strings.Contains(strings.Join(names, ","), "search_tools")
			if managed != tc.wantManaged {
				t.Fatalf("engine's tools %v: managed %v, want %v", names, managed, tc.wantManaged)
			}
			if !tc.wantManaged && (len(names) != 24 || names[0] != "Tool00" || names[23] != "Tool23") {
				t.Errorf("engine's tools %v, want the client's 24 in order", names)
			}
			if tc.wantManaged && len(names) > 3 {
				t.Errorf("engine's tools %v: managed, so none of the client's is loaded at first", names)
			}
		})
	}
}

// An X-Maskgate-Client-Tools value the gateway does not know is a 400 in the door's
// envelope that names the header and its values.
func TestClientTools_BadHeader(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	g := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
		o.State = state.NewMemory(state.Options{})
	})
	body := `{"model":"m1","messages":[{"role":"user","content":"hi"}],"tools":` + agentTools(24, false) + `}`
	resp, raw := postDoor(t, g.URL, "/v1/chat/completions", body, map[string]string{gateway.HeaderClientTools: "lazy"})
	var e struct {
		Error struct {
			Message, Type string
			Code          string `json:"code"`
		} `json:"error"`
	}
	if resp.StatusCode != 400 || json.Unmarshal(raw, &e) != nil || e.Error.Type != "invalid_request_error" ||
		!strings.Contains(e.Error.Message, "X-Maskgate-Client-Tools must be callable or managed") {
		t.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	if b := up.lastBody(); b != nil {
		t.Errorf("the engine was asked: %.200s", b)
	}
	msgs := `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":` + agentTools(24, true) + `}`
	resp, raw = postDoor(t, g.URL, "/v1/messages", msgs, map[string]string{gateway.HeaderClientTools: "lazy"})
	if resp.StatusCode != 400 || !bytes.Contains(raw, []byte(`"type":"error"`)) || !bytes.Contains(raw, []byte("X-Maskgate-Client-Tools")) {
		t.Errorf("messages: status %d: %s", resp.StatusCode, raw)
	}
}

// TestClientTools_DeferredStayUncallableInASmallArray: Claude Code with tool search sends
// 12 tools and one placeholder with defer_loading, fewer than eager_below; the deferred
// one still does not reach the engine as callable, the others all do, and the gateway's
// meta-tools are not offered to a client that searches itself.
func TestClientTools_DeferredStayUncallableInASmallArray(t *testing.T) {
	tools := strings.TrimSuffix(agentTools(12, true), "]") +
		`,{"name":"DeferredToolPlaceholder","description":"deferred","input_schema":{"type":"object"},"defer_loading":true}]`
	body := `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":` + tools + `}`
	up := newUpstream(t, replyJSON(200, completionJSON))
	g := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Strategy = gateway.StrategyRemove
	})
	resp, out := postDoor(t, g.URL, "/v1/messages", body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	names := engineToolNames(t, up.lastBody())
	if len(names) != 12 || names[0] != "Tool00" || names[11] != "Tool11" {
		t.Errorf("engine's tools %v, want the 12 undeferred in order and not the placeholder (strategy %s)", names, resp.Header.Get("X-Maskgate-Strategy"))
	}
}

// engineToolNames are the names of the tools array the engine was sent, in order.
func engineToolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var sent struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range sent.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}
