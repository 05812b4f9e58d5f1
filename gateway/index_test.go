package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// loader is a pass-through that claims to serve strategy index as kind, recording what
// each call asked of it.
type loader struct {
	backends.Backend
	kind        backends.LoadKind
	mu          sync.Mutex
	allowed     [][]string
	definitions []string
}

func (l *loader) ConstrainsTools() bool         { return l.kind == backends.LoadByDefinition }
func (l *loader) LoadsTools() backends.LoadKind { return l.kind }

func (l *loader) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	l.mu.Lock()
	l.allowed = append(l.allowed, req.Allowed)
	l.definitions = append(l.definitions, string(req.Definitions))
	l.mu.Unlock()
	return l.Backend.ChatCompletion(ctx, req)
}

// indexGateway is a gateway serving strategy index over sc's upstream through a loader
// of kind, with the 25-tool catalog; edit, when set, changes the options.
func indexGateway(t *testing.T, sc *scripted, kind backends.LoadKind, edit func(*gateway.Options)) (*httptest.Server, *loader) {
	t.Helper()
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	inner, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	be := &loader{Backend: inner, kind: kind}
	o := gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t),
		State:     state.NewMemory(state.Options{}),
		Strategy:  gateway.StrategyIndex,
	}
	if edit != nil {
		edit(&o)
	}
	srv := httptest.NewServer(gateway.New(o))
	t.Cleanup(srv.Close)
	return srv, be
}

// slackDefinition is slack_send_message as the catalog renders it (bigCatalog).
const slackDefinition = `{"type":"function","function":{"name":"slack_send_message","description":"Tool slack send message does its job.","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}`

// loadResults are the tool messages of a body that answer load_tool calls, decoded.
func loadResults(t *testing.T, body map[string]json.RawMessage) []map[string]json.RawMessage {
	t.Helper()
	var msgs []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	loads := map[string]bool{}
	var out []map[string]json.RawMessage
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Function.Name == "load_tool" {
				loads[c.ID] = true
			}
		}
		if m.Role == "tool" && loads[m.ToolCallID] {
			var r map[string]json.RawMessage
			if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
				t.Fatalf("load result %q: %v", m.Content, err)
			}
			out = append(out, r)
		}
	}
	return out
}

func TestIndex_PromptHoldsStillAndALoadBringsTheDefinition(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
		textReply("sent", 100, 90),
		callReply("c3", "load_tool", `{"toolNames":["slack_send_message","github_create_issue"]}`),
		textReply("done", 100, 90),
	}}
	srv, be := indexGateway(t, sc, backends.LoadByDefinition, nil)
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]}`, "ix")
	if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "index" {
		t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
	}
	resp, body = postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"},{"role":"assistant","content":"sent"},{"role":"user","content":"and github"}]}`, "ix")
	if resp.StatusCode != 200 {
		t.Fatalf("second turn %d: %s", resp.StatusCode, body)
	}
	if len(sc.bodies) != 4 {
		t.Fatalf("%d rounds, want 4", len(sc.bodies))
	}
	// The tools array: the two meta-tools, the index in load_tool's description, no
	// definition of any catalog tool, the same bytes in every round of both turns.
	tools := sc.bodies[0]["tools"]
	for i, b := range sc.bodies {
		if string(b["tools"]) != string(tools) {
			t.Fatalf("round %d's tools differ from round 0's: the prefix moved", i)
		}
	}
	if names := toolNames(t, tools); strings.Join(names, " ") != "search_tools load_tool" {
		t.Fatalf("tools %v, want the meta-tools alone", names)
	}
	var defs []struct {
		Function struct {
			Description string `json:"description"`
		} `json:"function"`
	}
	_ = json.Unmarshal(tools, &defs)
	desc := defs[1].Function.Description
	for _, line := range []string{"## misc\n- misc_tool_00: Tool misc tool 00 does its job.\n", "- misc_tool_21: Tool misc tool 21 does its job.\n\n## other\n- calendar_create_event: Tool calendar create event does its job.\n- github_create_issue:", "- slack_send_message: Tool slack send message does its job.\n"} {
		if !strings.Contains(desc, line) {
			t.Errorf("load_tool's description lacks %q:\n%s", line, desc)
		}
	}
	if strings.Contains(string(tools), `"parameters":{"type":"object","properties":{"x"`) {
		t.Error("a catalog tool's parameters reached the tools array")
	}
	// The load's result carries the definition, and the backend was asked to hold calls
	// to it from the next round on.
	loads := loadResults(t, sc.bodies[1])
	if len(loads) != 1 || string(loads[0]["tools"]) != "["+slackDefinition+"]" {
		t.Fatalf("round 1's load results %v, want one carrying slack_send_message's definition", loads)
	}
	if be.definitions[0] != "" || be.definitions[1] != "["+slackDefinition+"]" {
		t.Errorf("definitions %q, want none then slack_send_message's", be.definitions[:2])
	}
	if got := strings.Join(be.allowed[1], " "); got != "search_tools load_tool slack_send_message" {
		t.Errorf("round 1 allowed %q", got)
	}
	// The second turn's load: slack again adds nothing, github is added once.
	loads = loadResults(t, sc.bodies[3])
	if len(loads) != 2 {
		t.Fatalf("round 3 carries %d load results, want the first turn's spliced back and its own", len(loads))
	}
	var second []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(loads[1]["tools"], &second); err != nil || len(second) != 1 || second[0].Function.Name != "github_create_issue" {
		t.Errorf("the second load's definitions %s, want github_create_issue's alone (slack's is in the conversation)", loads[1]["tools"])
	}
	if !strings.HasPrefix(be.definitions[3], "["+slackDefinition+",") || !strings.Contains(be.definitions[3], `"name":"github_create_issue"`) {
		t.Errorf("round 3's definitions %s, want slack's then github's", be.definitions[3])
	}
}

func TestIndex_DefinitionsComeBackWhenTheirExchangeIsDropped(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
		textReply("loaded", 100, 90),
		callReply("c2", "load_tool", `{"toolName":"calendar_create_event"}`),
		textReply("ok", 100, 90),
	}}
	srv, _ := indexGateway(t, sc, backends.LoadByDefinition, nil)
	if resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]}`, "drop"); resp.StatusCode != 200 {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	// The client rewrote the message the exchange followed: the exchange is dropped,
	// slack stays loaded, and its definition is gone from the conversation.
	if resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"summary of earlier turns"},{"role":"assistant","content":"loaded"},{"role":"user","content":"plan a meeting"}]}`, "drop"); resp.StatusCode != 200 {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	if n := len(loadResults(t, sc.bodies[2])); n != 0 {
		t.Fatalf("the dropped exchange's load result is still in the conversation (%d)", n)
	}
	loads := loadResults(t, sc.bodies[3])
	if len(loads) != 1 {
		t.Fatalf("%d load results in round 3, want the new one", len(loads))
	}
	got := string(loads[0]["tools"])
	if !strings.Contains(got, `"name":"calendar_create_event"`) || !strings.Contains(got, slackDefinition) {
		t.Errorf("the load's definitions %s, want calendar_create_event's and slack_send_message's restored", got)
	}
}

func TestIndex_ProgressiveLoadsAreExchangesWithTheDefinitions(t *testing.T) {
	sc := &scripted{replies: []string{textReply("ok", 100, 90)}}
	srv, be := indexGateway(t, sc, backends.LoadByDefinition, func(o *gateway.Options) { o.Progressive = true })
	if resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"send a slack message"}]}`, "prog"); resp.StatusCode != 200 {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	loads := loadResults(t, sc.bodies[0])
	if len(loads) != 1 || !strings.Contains(string(loads[0]["tools"]), slackDefinition) {
		t.Fatalf("progressive load results %v, want one carrying slack_send_message's definition", loads)
	}
	if !strings.Contains(be.definitions[0], slackDefinition) || !strings.Contains(strings.Join(be.allowed[0], " "), "slack_send_message") {
		t.Errorf("the first round may not call what progressive loading loaded: allowed %v", be.allowed[0])
	}
}

func TestIndex_BackendsThatCannotServeItGetRemove(t *testing.T) {
	sc := &scripted{replies: []string{textReply("ok", 100, 0)}}
	srv, _ := indexGateway(t, sc, backends.LoadNone, nil)
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "none")
	if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "remove" {
		t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
	}
}

func TestIndex_DeferredBackendsGetTheCatalogDeferred(t *testing.T) {
	sc := &scripted{replies: []string{
		callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
		textReply("ok", 100, 90),
	}}
	srv, be := indexGateway(t, sc, backends.LoadDeferred, nil)
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]}`, "def")
	if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "index" {
		t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
	}
	if string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) {
		t.Error("the tools array moved with the load")
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(sc.bodies[0]["tools"], &tools); err != nil || len(tools) != 27 {
		t.Fatalf("%d tools (%v), want the 2 meta-tools and the 25 of the catalog deferred", len(tools), err)
	}
	for i, tl := range tools {
		if deferred := string(tl["defer_loading"]) == "true"; deferred != (i >= 2) {
			t.Errorf("tool %d deferred %v", i, deferred)
		}
	}
	if want := slackDefinition[:len(slackDefinition)-1] + `,"defer_loading":true}`; !strings.Contains(string(sc.bodies[0]["tools"]), want) {
		t.Errorf("slack_send_message is not its definition with defer_loading: %s", sc.bodies[0]["tools"])
	}
	if be.allowed[1] != nil || be.definitions[1] != "" {
		t.Errorf("a deferred backend was given an allowed set %v or definitions %q", be.allowed[1], be.definitions[1])
	}
	if loads := loadResults(t, sc.bodies[1]); len(loads) != 1 || !strings.Contains(string(loads[0]["tools"]), `"name":"slack_send_message"`) {
		t.Errorf("load results %v, want one naming slack_send_message in tools", loads)
	}
}

func TestIndex_ClientModeRelayedLoadsCarryTheDefinitions(t *testing.T) {
	sc := &scripted{replies: []string{textReply("ok", 100, 90), textReply("ok", 100, 90)}}
	srv, be := indexGateway(t, sc, backends.LoadByDefinition, func(o *gateway.Options) { o.ToolMode = gateway.ModeClient })
	history := `{"role":"user","content":"tell slack"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"l1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"slack_send_message\"}"}}]},` +
		`{"role":"tool","tool_call_id":"l1","content":"{\"success\":true,\"message\":\"Loaded.\",\"toolName\":\"slack_send_message\"}"}`
	for i, body := range []string{
		`{"model":"m1","messages":[` + history + `]}`,
		`{"model":"m1","messages":[` + history + `,{"role":"assistant","content":"ok"},{"role":"user","content":"again"}]}`,
	} {
		if resp, out := postWithThread(t, srv, body, "client"); resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "index" {
			t.Fatalf("turn %d: %d %q: %s", i, resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), out)
		}
	}
	var first, second []json.RawMessage
	_ = json.Unmarshal(sc.bodies[0]["messages"], &first)
	_ = json.Unmarshal(sc.bodies[1]["messages"], &second)
	var tool struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(first[2], &tool); err != nil {
		t.Fatal(err)
	}
	want := `{"success":true,"message":"Loaded.","toolName":"slack_send_message"}` + "\n\nDefinitions of the tools this loaded: [" + slackDefinition + "]"
	if tool.Content != want {
		t.Errorf("the relayed load result reached the engine as\n%s\nwant\n%s", tool.Content, want)
	}
	if string(first[2]) != string(second[2]) {
		t.Error("the rewritten load result's bytes changed between turns: the prefix would move")
	}
	if string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) || be.definitions[0] != "["+slackDefinition+"]" {
		t.Errorf("tools moved or definitions %q", be.definitions[0])
	}
}

// Every door runs the one pipeline: a Messages and a Responses session under index get
// the same tools bytes from the engine's side, and a load's definition.
func TestIndex_ThroughTheOtherDoors(t *testing.T) {
	for _, door := range []struct{ path, body string }{
		{"/v1/messages", `{"model":"m1","max_tokens":50,"messages":[{"role":"user","content":"tell slack"}]}`},
		{"/v1/responses", `{"model":"m1","input":"tell slack"}`},
	} {
		sc := &scripted{replies: []string{
			callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`),
			textReply("ok", 100, 90),
		}}
		srv, be := indexGateway(t, sc, backends.LoadByDefinition, nil)
		resp, out := postDoor(t, srv.URL, door.path, door.body, map[string]string{"X-Thread-Id": "d" + door.path})
		if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "index" {
			t.Fatalf("%s: %d %q: %s", door.path, resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), out)
		}
		if len(sc.bodies) != 2 || string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) {
			t.Fatalf("%s: %d rounds, or the tools moved with the load", door.path, len(sc.bodies))
		}
		if names := toolNames(t, sc.bodies[0]["tools"]); strings.Join(names, " ") != "search_tools load_tool" {
			t.Errorf("%s: tools %v", door.path, names)
		}
		if loads := loadResults(t, sc.bodies[1]); len(loads) != 1 || string(loads[0]["tools"]) != "["+slackDefinition+"]" {
			t.Errorf("%s: load results %v", door.path, loads)
		}
		if be.definitions[1] != "["+slackDefinition+"]" {
			t.Errorf("%s: definitions %q", door.path, be.definitions[1])
		}
	}
}

// GET /v1/tools?view=index shows the index the engine reads under index, byte for byte as
// load_tool's description ends with it.
func TestIndex_ToolsEndpointShowsTheIndex(t *testing.T) {
	sc := &scripted{replies: []string{textReply("ok", 100, 90)}}
	srv, _ := indexGateway(t, sc, backends.LoadByDefinition, nil)
	resp, body := fetch(t, "GET", srv.URL+"/v1/tools?view=index", nil, nil)
	var got struct {
		Object, Version, Text string
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 || got.Object != "tool_index" || got.Version == "" {
		t.Fatalf("%d %v: %s", resp.StatusCode, err, body)
	}
	if r, out := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "view"); r.StatusCode != 200 {
		t.Fatalf("%d: %s", r.StatusCode, out)
	}
	var defs []struct {
		Function struct {
			Description string `json:"description"`
		} `json:"function"`
	}
	if err := json.Unmarshal(sc.bodies[0]["tools"], &defs); err != nil || len(defs) != 2 {
		t.Fatalf("tools: %v", err)
	}
	if !strings.HasSuffix(defs[1].Function.Description, "\n"+got.Text) || !strings.Contains(got.Text, "- misc_tool_21: Tool misc tool 21 does its job.\n") {
		t.Errorf("the endpoint's index is not the one load_tool's description ends with:\n%s", got.Text)
	}
}
