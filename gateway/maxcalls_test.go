package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Responses max_tool_calls bounds the calls the gateway answers itself (its meta-tools
// and the tools it runs, as OpenAI's built-in tools): past it, the model's further
// calls are ignored and the turn ends with what it wrote; unset, the loop goes on.
func TestResponses_MaxToolCallsEndsTheTurn(t *testing.T) {
	search := func(id string) string {
		return strings.Replace(callReply(id, "search_tools", `{"query":"weather"}`), `"content":null`, `"content":"Looking."`, 1)
	}
	for _, tc := range []struct {
		name     string
		limit    string
		upstream int // requests the engine got
		output   string
	}{
		{"none", `"max_tool_calls":0,`, 1, "Looking."},
		{"one", `"max_tool_calls":1,`, 2, "Looking."},
		{"unbounded", ``, 3, "Hello there."},
	} {
		for _, stream := range []bool{false, true} {
			sc := &scripted{replies: []string{search("c1"), search("c2"), reasoningReply}}
			gw := managedGateway(t, sc, "")
			body := `{"model":"m1",` + tc.limit + `"stream":` + map[bool]string{false: "false", true: "true"}[stream] + `,"input":"weather?"}`
			status, _, out := call(t, gw, "POST", "/v1/responses", "", body)
			if status != http.StatusOK {
				t.Fatalf("%s: %d %s", tc.name, status, out)
			}
			if len(sc.bodies) != tc.upstream {
				t.Errorf("%s, stream %v: the engine got %d requests, want %d", tc.name, stream, len(sc.bodies), tc.upstream)
			}
			if strings.Contains(out, "search_tools") || !strings.Contains(out, tc.output) {
				t.Errorf("%s, stream %v: answer %s, want %q and no call", tc.name, stream, out, tc.output)
			}
			if !stream {
				var r struct {
					Status string `json:"status"`
				}
				if json.Unmarshal([]byte(out), &r) != nil || r.Status != "completed" {
					t.Errorf("%s: status %q", tc.name, r.Status)
				}
			}
		}
	}
}
