package gateway_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/replicas"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// In client mode the gateway cannot answer the model, so a call outside the allowed set
// is taken out of the answer and the client is told why in its text; under remove and
// validate (where the engine is told nothing) as under any strategy. Whole and streamed.
func TestClientMode_StrayCallIsRefusedNotPassed(t *testing.T) {
	for _, strategy := range []gateway.Strategy{gateway.StrategyRemove, gateway.StrategyValidate} {
		for _, stream := range []bool{false, true} {
			sc := &scripted{replies: []string{callReply("c1", "github_create_issue", `{"x":"bug"}`)}}
			gw := scriptedGateway(t, sc, func(o *gateway.Options) {
				managed(t, o)
				o.ToolMode, o.Strategy = gateway.ModeClient, strategy
			})
			req := `{"model":"m1","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"file a bug"}]}`
			resp, body := postWithThread(t, gw, req, "t-stray")
			if resp.StatusCode != 200 {
				t.Fatalf("%s stream=%v: %d %s", strategy, stream, resp.StatusCode, body)
			}
			out := string(body)
			if strings.Contains(out, `"tool_calls"`) || strings.Contains(out, `"name":"github_create_issue"`) {
				t.Errorf("%s stream=%v: the stray call reached the client: %s", strategy, stream, out)
			}
			if !strings.Contains(out, `maskgate refused the call to \"github_create_issue\": it is not loaded in this conversation; load it with load_tool first.`) {
				t.Errorf("%s stream=%v: no refusal the client can show: %s", strategy, stream, out)
			}
			if !strings.Contains(out, `"finish_reason":"stop"`) {
				t.Errorf("%s stream=%v: finish is not stop: %s", strategy, stream, out)
			}
		}
	}
	// A loaded tool's call still reaches the client, with the meta-tool calls.
	sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`)}}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		managed(t, o)
		o.ToolMode, o.Strategy = gateway.ModeClient, gateway.StrategyRemove
	})
	if _, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, "t"); !strings.Contains(string(body), `"name":"load_tool"`) {
		t.Errorf("the meta-tool call was refused: %s", body)
	}
}

// A tool a filter denies does not slip through client mode either: loaded or not, its
// call is refused as not available.
func TestClientMode_FilteredToolIsRefused(t *testing.T) {
	rules, err := policy.Compile([]policy.Rule{{Phases: []policy.Phase{policy.Load, policy.Active}, Tools: []string{"slack_*"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := &scripted{replies: []string{callReply("c2", "slack_send_message", `{"x":"hi"}`)}}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		managed(t, o)
		o.ToolMode, o.Strategy, o.Policy = gateway.ModeClient, gateway.StrategyRemove, rules
	})
	// The messages say it was loaded; the filter says it may not be called.
	req := `{"model":"m1","messages":[{"role":"user","content":"slack"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"slack_send_message\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"{\"success\":true,\"message\":\"loaded\",\"toolName\":\"slack_send_message\"}"}]}`
	_, body := postWithThread(t, gw, req, "t-f")
	if strings.Contains(string(body), `"tool_calls"`) || !strings.Contains(string(body), `refused the call to \"slack_send_message\": it is not available here.`) {
		t.Errorf("a filtered call got through: %s", body)
	}
}

// "Deny unless the plan is pro": a request without a plan is denied, as Mastra's
// ToolSearchProcessor reads its own example (free / pro / none: no / yes / no).
func TestFilters_DenyUnlessAContextKeyHolds(t *testing.T) {
	pro := policy.Cond{Field: "metadata.plan", Op: policy.Equals, Values: []string{"pro"}}
	rules, err := policy.Compile([]policy.Rule{{Name: "premium", Phases: []policy.Phase{policy.Search, policy.Load, policy.Active},
		Tools: []string{"github_*"}, When: &policy.Cond{Not: &pro}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		metadata string
		loaded   bool
	}{{`,"metadata":{"plan":"free"}`, false}, {`,"metadata":{"plan":"pro"}`, true}, {``, false}} {
		sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"github_create_issue"}`), plainReply}}
		gw := scriptedGateway(t, sc, func(o *gateway.Options) {
			managed(t, o)
			o.Strategy, o.Policy = gateway.StrategyRemove, rules
		})
		resp, body := postWithThread(t, gw, `{"model":"m1"`+tc.metadata+`,"messages":[{"role":"user","content":"file it"}]}`, "t-plan")
		if resp.StatusCode != 200 || len(sc.bodies) != 2 {
			t.Fatalf("%s: %d %s", tc.metadata, resp.StatusCode, body)
		}
		got := strings.Contains(string(sc.bodies[1]["tools"]), `"github_create_issue"`)
		if got != tc.loaded {
			t.Errorf("metadata %q: loaded %v, want %v", tc.metadata, got, tc.loaded)
		}
	}
}

// The replica that answered is named on managed answers too (the loop used to drop the
// backend's headers), whole and streamed.
func TestReplicaHeaderOnManagedAnswers(t *testing.T) {
	var rs []replicas.Replica
	for i := range 2 {
		sc := &scripted{}
		for range 8 {
			sc.replies = append(sc.replies, plainReply)
		}
		up := httptest.NewServer(sc.handler(t))
		t.Cleanup(up.Close)
		be, err := openaicompat.New(openaicompat.Options{Name: fmt.Sprintf("r%d", i), BaseURL: up.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, replicas.Replica{ID: up.URL, Backend: be})
	}
	be, err := replicas.New(replicas.Options{Name: "pool", Replicas: rs})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "pool", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Strategy: gateway.StrategyRemove,
	}))
	t.Cleanup(srv.Close)
	for _, stream := range []string{"false", "true"} {
		resp, body := postWithThread(t, srv, `{"model":"m1","stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`, "t-r")
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if got := resp.Header.Get(replicas.HeaderReplica); got != "0" && got != "1" {
			t.Errorf("stream=%s: X-Maskgate-Replica %q on a managed answer (strategy %s)", stream, got, resp.Header.Get(gateway.HeaderStrategy))
		}
	}
}

// DELETE /admin/threads/{id} takes the id the client sent, scoped to the key that sent
// it: another key's thread of the same id stays.
func TestAdmin_DeleteByTheClientsThreadID(t *testing.T) {
	sc := &scripted{}
	mem := state.NewMemory(state.Options{})
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		managed(t, o)
		o.State, o.Strategy, o.AdminKey = mem, gateway.StrategyRemove, "adm"
		o.Keys = keyring(t, tenant.Key{Name: "alice"}, tenant.Key{Name: "bob"})
	})
	for _, who := range []string{"alice", "bob"} {
		sc.replies = []string{callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`), plainReply}
		resp, body := sendAs(t, gw, "/v1/chat/completions", who, map[string]string{"X-Thread-Id": "conv-1"}, `{"model":"m1","messages":[{"role":"user","content":"slack"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", who, resp.StatusCode, body)
		}
	}
	if st := mem.Stats(); st.Threads != 2 {
		t.Fatalf("%d threads, want alice's and bob's", st.Threads)
	}
	if _, out := adminDo(t, "DELETE", gw.URL+"/admin/threads/conv-1?key=alice", "adm"); out["deleted"] != true {
		t.Errorf("delete alice's conv-1: %v", out)
	}
	if _, out := adminDo(t, "DELETE", gw.URL+"/admin/threads/conv-1?key=alice", "adm"); out["deleted"] != false {
		t.Errorf("deleted twice: %v", out)
	}
	if _, out := adminDo(t, "DELETE", gw.URL+"/admin/threads/conv-1", "adm"); out["deleted"] != false {
		t.Errorf("the anonymous caller's conv-1 does not exist: %v", out)
	}
	if st := mem.Stats(); st.Threads != 1 {
		t.Errorf("%d threads left, want bob's", st.Threads)
	}
	// Bob's next turn still has its tool.
	sc.replies = []string{plainReply}
	n := len(sc.bodies)
	sendAs(t, gw, "/v1/chat/completions", "bob", map[string]string{"X-Thread-Id": "conv-1"}, `{"model":"m1","messages":[{"role":"user","content":"again"}]}`)
	if !strings.Contains(string(sc.bodies[n]["tools"]), "slack_send_message") {
		t.Error("deleting alice's thread touched bob's")
	}
}
