package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// constraining is a pass-through that claims to enforce Request.Allowed, recording it.
type constraining struct {
	backends.Backend
	mu      sync.Mutex
	allowed [][]string
}

func (c *constraining) ConstrainsTools() bool { return true }

func (c *constraining) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	c.mu.Lock()
	c.allowed = append(c.allowed, req.Allowed)
	c.mu.Unlock()
	return c.Backend.ChatCompletion(ctx, req)
}

func TestMask_PromptKeepsTheWholeCatalogWhileTheAllowedSetGrows(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
		callReply("c2", "slack_send_message", `{"x":"hi"}`),
	}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	inner, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	be := &constraining{Backend: inner}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t),
		State:     state.NewMemory(state.Options{}),
	}))
	defer srv.Close()
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]}`, "m")
	if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "mask" {
		t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
	}
	if len(sc.bodies) != 2 {
		t.Fatalf("%d rounds", len(sc.bodies))
	}
	if string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) {
		t.Error("the tools bytes changed when the loaded set did: the prefix cache would miss")
	}
	if n := len(toolNames(t, sc.bodies[0]["tools"])); n != 27 {
		t.Errorf("%d tools in the prompt, want the 25 of the catalog plus 2 meta-tools", n)
	}
	want := []string{"[search_tools load_tool]", "[search_tools load_tool slack_send_message]"}
	for i, a := range be.allowed {
		if fmt.Sprint(a) != want[i] {
			t.Errorf("round %d allowed %v, want %s", i, a, want[i])
		}
	}
}
