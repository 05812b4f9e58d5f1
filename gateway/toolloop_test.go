package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// bigCatalog has 25 tools: enough to be managed (the threshold is 20).
func bigCatalog(t *testing.T) *toolsearch.Index {
	t.Helper()
	var b strings.Builder
	b.WriteString("[")
	names := []string{"slack_send_message", "github_create_issue", "calendar_create_event"}
	for i := 0; i < 22; i++ {
		names = append(names, fmt.Sprintf("misc_tool_%02d", i))
	}
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%q,"description":"Tool %s does its job.","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}`, n, strings.ReplaceAll(n, "_", " "))
	}
	b.WriteString("]")
	tools, err := toolsearch.ParseTools([]byte(b.String()), "big.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return toolsearch.NewIndex(cat, toolsearch.Options{})
}

// scripted answers each upstream call with the next reply and records the bodies.
type scripted struct {
	mu      sync.Mutex
	replies []string
	bodies  []map[string]json.RawMessage
}

func (s *scripted) handler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("upstream got invalid JSON: %v", err)
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		if len(s.replies) == 0 {
			s.mu.Unlock()
			http.Error(w, `{"error":{"message":"script exhausted"}}`, 500)
			return
		}
		reply := s.replies[0]
		s.replies = s.replies[1:]
		s.mu.Unlock()
		if string(body["stream"]) == "true" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range sseFromCompletion(t, reply) {
				fmt.Fprintf(w, "data: %s\n\n", ev)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, reply)
	}
}

func callReply(id, name, args string) string {
	a, _ := json.Marshal(args)
	return `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"` + id +
		`","type":"function","function":{"name":"` + name + `","arguments":` + string(a) + `}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"prompt_tokens_details":{"cached_tokens":90}}}`
}

// scriptedGateway is a gateway in front of sc's upstream, serving model m1; edit, when
// set, changes the options.
func scriptedGateway(t *testing.T, sc *scripted, edit func(*gateway.Options)) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	o := gateway.Options{Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"m1"}, Backend: be}}}
	if edit != nil {
		edit(&o)
	}
	srv := httptest.NewServer(gateway.New(o))
	t.Cleanup(srv.Close)
	return srv
}

// managed has a gateway manage tools over the 25-tool catalog, for any model.
func managed(t *testing.T, o *gateway.Options) {
	o.Upstreams[0].Models = []string{"*"}
	o.Tools, o.State = bigCatalog(t), state.NewMemory(state.Options{})
}

func managedGateway(t *testing.T, sc *scripted, mode string) *httptest.Server {
	return scriptedGateway(t, sc, func(o *gateway.Options) { managed(t, o); o.ToolMode = mode })
}

func toolNames(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatalf("tools %s: %v", raw, err)
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

func messagesOf(t *testing.T, raw json.RawMessage) []json.RawMessage {
	t.Helper()
	var m []json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestToolLoop_SearchLoadThenCallReachesClientAlone(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "search_tools", `{"query":"post a slack message"}`),
		callReply("c2", "load_tool", `{"toolName":"slack_send_message"}`),
		callReply("c3", "slack_send_message", `{"x":"hi"}`),
	}}
	gw := managedGateway(t, sc, gateway.ModeServer)
	req := `{"model":"m1","messages":[{"role":"user","content":"tell the team on slack"}]}`
	resp, body := postWithThread(t, gw, req, "t1")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	json.Unmarshal(body, &got)
	if calls := got.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "slack_send_message" {
		t.Fatalf("client got %s", body)
	}
	if got.Usage.PromptTokens != 300 || got.Usage.PromptTokensDetails.CachedTokens != 270 {
		t.Errorf("usage is not the sum of three rounds: %s", body)
	}
	if resp.Header.Get(gateway.HeaderStrategy) != "remove" {
		t.Errorf("strategy %q", resp.Header.Get(gateway.HeaderStrategy))
	}
	if len(sc.bodies) != 3 {
		t.Fatalf("%d upstream calls, want 3", len(sc.bodies))
	}
	metaOnly := []string{meta.SearchTools, meta.LoadTool}
	if got := toolNames(t, sc.bodies[0]["tools"]); fmt.Sprint(got) != fmt.Sprint(metaOnly) {
		t.Errorf("round 0 tools %v, want the meta-tools only", got)
	}
	if got := toolNames(t, sc.bodies[2]["tools"]); fmt.Sprint(got) != fmt.Sprint(append(metaOnly, "slack_send_message")) {
		t.Errorf("round 2 tools %v", got)
	}
	// Each round's messages extend the last round's: the engine's prefix survives.
	for i := 1; i < 3; i++ {
		prev, cur := messagesOf(t, sc.bodies[i-1]["messages"]), messagesOf(t, sc.bodies[i]["messages"])
		if len(cur) != len(prev)+2 {
			t.Fatalf("round %d: %d messages after %d", i, len(cur), len(prev))
		}
		for j := range prev {
			if string(prev[j]) != string(cur[j]) {
				t.Errorf("round %d changed message %d", i, j)
			}
		}
	}

	// The next request from the client (which never saw the meta-tool calls) is spliced:
	// the engine sees the earlier exchange in place, and the tool stays loaded.
	sc.replies = []string{`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`}
	next := `{"model":"m1","messages":[{"role":"user","content":"tell the team on slack"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"slack_send_message","arguments":"{\"x\":\"hi\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c3","content":"sent"}]}`
	if resp, body := postWithThread(t, gw, next, "t1"); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	round2 := messagesOf(t, sc.bodies[2]["messages"])
	turn2 := messagesOf(t, sc.bodies[3]["messages"])
	if len(turn2) != len(round2)+2 {
		t.Fatalf("second turn has %d messages, want %d", len(turn2), len(round2)+2)
	}
	for j := range round2 {
		if string(round2[j]) != string(turn2[j]) {
			t.Errorf("second turn changed message %d: the prefix cache would miss", j)
		}
	}
	if got := toolNames(t, sc.bodies[3]["tools"]); fmt.Sprint(got) != fmt.Sprint(append(metaOnly, "slack_send_message")) {
		t.Errorf("second turn tools %v: the load was forgotten", got)
	}
}

func TestToolLoop_CallToUnloadedToolIsAnsweredNotReturned(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "github_create_issue", `{"x":"bug"}`),
		`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`,
	}}
	gw := managedGateway(t, sc, gateway.ModeServer)
	resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"file a bug"}]}`, "t2")
	if resp.StatusCode != 200 || strings.Contains(string(body), "github_create_issue") {
		t.Fatalf("status %d, client saw %s", resp.StatusCode, body)
	}
	msgs := messagesOf(t, sc.bodies[1]["messages"])
	if last := string(msgs[len(msgs)-1]); !strings.Contains(last, "not loaded") || !strings.Contains(last, `"tool_call_id":"c1"`) {
		t.Errorf("the model was not told the tool is not loaded: %s", last)
	}
}

func TestToolLoop_StreamingClientSeesTextAsItComesAndOnlyRealCalls(t *testing.T) {
	thinking := `{"id":"r1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"Let me find the calendar tool.","tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"calendar_create_event\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}}`
	sc := &scripted{replies: []string{thinking, callReply("c2", "calendar_create_event", `{"x":"standup"}`)}}
	gw := managedGateway(t, sc, gateway.ModeServer)
	_, body := postWithThread(t, gw, `{"model":"m1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"book standup"}]}`, "t3")
	ev := sseEvents(body)
	if len(ev) < 5 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("stream %q", ev)
	}
	if strings.Count(string(body), `"role"`) != 1 || !strings.Contains(ev[0], `"role":"assistant"`) {
		t.Errorf("role must come once, first: %q", ev)
	}
	if !strings.Contains(string(body), "Let me find") || !strings.Contains(string(body), `"name":"calendar_create_event","arguments":"{\"x\":\"standup\"}"`) {
		t.Errorf("text or the whole real call missing: %s", body)
	}
	if strings.Contains(string(body), "load_tool") {
		t.Errorf("the client saw a meta-tool call: %s", body)
	}
	if !strings.Contains(ev[len(ev)-2], `"prompt_tokens":150`) {
		t.Errorf("usage is not the sum of both rounds: %s", ev[len(ev)-2])
	}
	var roles []string
	for _, b := range sc.bodies {
		roles = append(roles, string(b["stream"]))
	}
	if fmt.Sprint(roles) != "[true true]" {
		t.Errorf("rounds were not streamed: %v", roles)
	}
}

func TestToolLoop_ClientModeReturnsMetaCallsAndReadsStateFromMessages(t *testing.T) {
	sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
		`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`}}
	gw := managedGateway(t, sc, gateway.ModeClient)
	_, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"slack"}]}`, "t4")
	if !strings.Contains(string(body), `"name":"load_tool"`) {
		t.Fatalf("client mode hid the meta-tool call: %s", body)
	}
	next := `{"model":"m1","messages":[{"role":"user","content":"slack"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"slack_send_message\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"{\"success\":true,\"message\":\"loaded\",\"toolName\":\"slack_send_message\"}"}]}`
	postWithThread(t, gw, next, "t4")
	if got := toolNames(t, sc.bodies[1]["tools"]); fmt.Sprint(got) != fmt.Sprint([]string{meta.SearchTools, meta.LoadTool, "slack_send_message"}) {
		t.Errorf("tools after a load in the messages: %v", got)
	}
}

func TestToolLoop_SmallCatalogsStayEager(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		State:     state.NewMemory(state.Options{}),
	}))
	defer srv.Close()
	resp, _ := post(t, srv, oddRequest)
	if string(up.lastBody()) != oddRequest || resp.Header.Get(gateway.HeaderStrategy) != "eager" {
		t.Errorf("a one-tool request was changed (strategy %q)", resp.Header.Get(gateway.HeaderStrategy))
	}
}

func postWithThread(t *testing.T, srv *httptest.Server, body, thread string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Thread-Id", thread)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// sseFromCompletion streams a scripted completion the way engines do: role, content in
// two pieces, each tool call as name then two argument fragments, finish, usage.
func sseFromCompletion(t *testing.T, reply string) []string {
	t.Helper()
	var c struct {
		ID      string `json:"id"`
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				Reasoning *string `json:"reasoning_content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(reply), &c); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	head := `{"id":"` + c.ID + `","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":`
	out := []string{head + `{"role":"assistant","content":""},"finish_reason":null}]}`}
	m := c.Choices[0].Message
	if m.Reasoning != nil && *m.Reasoning != "" {
		half := len(*m.Reasoning) / 2
		out = append(out, head+`{"reasoning_content":`+q((*m.Reasoning)[:half])+`},"finish_reason":null}]}`,
			head+`{"reasoning_content":`+q((*m.Reasoning)[half:])+`},"finish_reason":null}]}`)
	}
	if m.Content != nil && *m.Content != "" {
		half := len(*m.Content) / 2
		out = append(out, head+`{"content":`+q((*m.Content)[:half])+`},"finish_reason":null}]}`,
			head+`{"content":`+q((*m.Content)[half:])+`},"finish_reason":null}]}`)
	}
	for i, tc := range m.ToolCalls {
		idx := fmt.Sprint(i)
		args := tc.Function.Arguments
		half := len(args) / 2
		out = append(out,
			head+`{"tool_calls":[{"index":`+idx+`,"id":"`+tc.ID+`","type":"function","function":{"name":`+q(tc.Function.Name)+`,"arguments":""}}]},"finish_reason":null}]}`,
			head+`{"tool_calls":[{"index":`+idx+`,"function":{"arguments":`+q(args[:half])+`}}]},"finish_reason":null}]}`,
			head+`{"tool_calls":[{"index":`+idx+`,"function":{"arguments":`+q(args[half:])+`}}]},"finish_reason":null}]}`)
	}
	out = append(out, head+`{},"finish_reason":`+q(c.Choices[0].FinishReason)+`}]}`)
	if len(c.Usage) > 0 {
		out = append(out, `{"id":"`+c.ID+`","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":`+string(c.Usage)+`}`)
	}
	return out
}

func TestToolLoop_ProgressiveLoadsSearchResultsForEachUserMessage(t *testing.T) {
	sc := &scripted{replies: []string{`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams:   []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:       bigCatalog(t),
		State:       state.NewMemory(state.Options{}),
		Progressive: true,
		SearchTopK:  2,
	}))
	defer srv.Close()
	postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"send a slack message to the team"}]}`, "p1")
	got := toolNames(t, sc.bodies[0]["tools"])
	if len(got) < 3 || got[2] != "slack_send_message" {
		t.Errorf("tools %v: the user's message should have loaded slack_send_message", got)
	}
}

func TestToolLoop_MetaCallsNeverReachTheClientEvenPastMaxRounds(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var replies []string
		for i := 0; i < 10; i++ {
			replies = append(replies, callReply(fmt.Sprint("c", i), "search_tools", `{"query":"anything"}`))
		}
		sc := &scripted{replies: replies}
		gw := managedGateway(t, sc, gateway.ModeServer)
		resp, body := postWithThread(t, gw, fmt.Sprintf(`{"model":"m1","stream":%v,"messages":[{"role":"user","content":"x"}]}`, stream), "mr")
		if strings.Contains(string(body), `"name":"search_tools"`) {
			t.Errorf("stream=%v: a meta-tool call reached the client: %s", stream, body)
		}
		if !strings.Contains(string(body), "tool_rounds_exceeded") {
			t.Errorf("stream=%v: status %d, no tool_rounds_exceeded error: %s", stream, resp.StatusCode, body)
		}
		if len(sc.bodies) != 5 {
			t.Errorf("stream=%v: %d rounds, want 1 + max_rounds (4)", stream, len(sc.bodies))
		}
	}
}

func TestToolLoop_FilterPolicyAndAutoLoad(t *testing.T) {
	pol, err := policy.Compile([]policy.Rule{
		{Name: "no-slack", Phases: []policy.Phase{policy.Load}, Tools: []string{"slack_*"}},
		{Name: "no-calendar-for-interns", Phases: []policy.Phase{policy.Active}, Headers: []policy.Match{{Name: "X-Role", Value: "intern"}}, Tools: []string{"calendar_*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := &scripted{}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t),
		State:     state.NewMemory(state.Options{}),
		Policy:    pol,
		AutoLoad:  true,
	}))
	defer srv.Close()
	final := `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`

	// auto_load: search results are loaded at once and load_tool is not offered; the load
	// phase still refuses slack.
	sc.replies = []string{callReply("c1", "search_tools", `{"query":"slack message or calendar event"}`), final}
	postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, "f1")
	if got := toolNames(t, sc.bodies[0]["tools"]); fmt.Sprint(got) != "[search_tools]" {
		t.Errorf("auto_load offers %v, want search_tools alone", got)
	}
	after := fmt.Sprint(toolNames(t, sc.bodies[1]["tools"]))
	if !strings.Contains(after, "calendar_create_event") || strings.Contains(after, "slack_send_message") {
		t.Errorf("after an auto-loading search the tools are %s: want calendar loaded and slack refused", after)
	}

	// active: the same thread, but an intern's request does not see the calendar tool.
	sc.replies = []string{final}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m1","messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("X-Thread-Id", "f1")
	req.Header.Set("X-Role", "intern")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := fmt.Sprint(toolNames(t, sc.bodies[2]["tools"])); strings.Contains(got, "calendar_create_event") {
		t.Errorf("an intern's request offers %s", got)
	}
}

// An agent that rewrites its history (compaction) moves or removes the message a hidden
// exchange followed: the exchange goes back after that message wherever it now is, or is
// dropped when it is gone, and what it loaded stays loaded either way.
func TestToolLoop_SpliceFollowsItsMessageThroughARewrittenHistory(t *testing.T) {
	sc := &scripted{replies: []string{
		`{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`,
		callReply("c1", "search_tools", `{"query":"post a slack message"}`),
		callReply("c2", "load_tool", `{"toolName":"slack_send_message"}`),
		callReply("c3", "slack_send_message", `{"x":"hi"}`),
	}}
	gw := managedGateway(t, sc, gateway.ModeServer)
	greet, hello := `{"role":"user","content":"hi there"}`, `{"role":"assistant","content":"hello"}`
	ask := `{"role":"user","content":"tell the team on slack"}`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"slack_send_message","arguments":"{\"x\":\"hi\"}"}}]}`
	result := `{"role":"tool","tool_call_id":"c3","content":"sent"}`
	post := func(msgs ...string) {
		t.Helper()
		body := `{"model":"m1","messages":[` + strings.Join(msgs, ",") + `]}`
		if resp, out := postWithThread(t, gw, body, "rewrite"); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
	}
	post(greet)
	post(greet, hello, ask) // rounds: search, load, then the call the client gets
	// The last round's messages: the client's three, then the hidden exchange (search
	// call and result, load call and result).
	last := messagesOf(t, sc.bodies[3]["messages"])
	if len(last) != 7 || !strings.Contains(string(last[3]), `"search_tools"`) || !strings.Contains(string(last[6]), `"tool_call_id":"c2"`) {
		t.Fatalf("the last round is not the client's messages and the hidden exchange: %s", sc.bodies[3]["messages"])
	}
	hidden := last[3:7]

	done := `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`
	summary := `{"role":"user","content":"Summary: we said hello."}`
	for _, c := range []struct {
		name   string
		client []string
		// after is the client message the exchange must follow; "" when it must be gone.
		after string
	}{
		{"earlier turn summarised", []string{summary, ask, call, result}, ask},
		{"earlier turn removed, re-indented", []string{"{ \"role\": \"user\", \"content\": \"tell the team on slack\" }", call, result}, "{ \"role\": \"user\", \"content\": \"tell the team on slack\" }"},
		{"its message summarised away", []string{summary, call, result}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc.replies = []string{done}
			n := len(sc.bodies)
			post(c.client...)
			got := messagesOf(t, sc.bodies[n]["messages"])
			// The engine's view is the client's messages with the exchange (or nothing) after
			// the anchor: written out here from the client's messages.
			var want []string
			for _, m := range c.client {
				want = append(want, m)
				if m == c.after {
					for _, h := range hidden {
						want = append(want, string(h))
					}
				}
			}
			gotS := make([]string, len(got))
			for i, m := range got {
				gotS[i] = string(m)
			}
			if d := cmp.Diff(want, gotS); d != "" {
				t.Errorf("engine's messages (-want +got):\n%s", d)
			}
			if tools := toolNames(t, sc.bodies[n]["tools"]); !slices.Contains(tools, "slack_send_message") {
				t.Errorf("tools %v: the load was forgotten", tools)
			}
		})
	}
}
