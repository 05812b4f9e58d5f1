package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// A session under strategy index as the planner writes it for a LoadDeferred backend
// (backends.LoadDeferred): the meta-tools, the client's callable tool, then the rest of
// the catalog with "defer_loading": true as the tool object's last member, the same
// bytes on every turn. Loads are tool messages answering load_tool calls, each holding
// the gateway's load result with the definitions it added.
const (
	idxSearchTools = `{"type":"function","function":{"name":"search_tools","description":"Search the catalog.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}}`
	idxLoadTool    = `{"type":"function","function":{"name":"load_tool","description":"Load a tool. Index:\ngithub: github_create_issue: Open an issue.\ngit: git.commit: Commit staged files.\nslack: slack_post: Post a message.","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	idxIssueDef    = `{"type":"function","function":{"name":"github_create_issue","description":"Open an issue.","parameters":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}}`
	idxCommitDef   = `{"type":"function","function":{"name":"git.commit","description":"Commit staged files.","parameters":{"type":"object","properties":{"message":{"type":"string"}}}}}`
	idxSlackDef    = `{"type":"function","function":{"name":"slack_post","description":"Post a message.","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}`
)

func deferredDef(def string) string { return def[:len(def)-1] + `,"defer_loading":true}` }

var idxTools = `[` + idxSearchTools + `,` + idxLoadTool + `,` + weatherTool + `,` +
	deferredDef(idxIssueDef) + `,` + deferredDef(idxCommitDef) + `,` + deferredDef(idxSlackDef) + `]`

// loadResultJSON is the gateway's load result for name, as a tool message's content.
func loadResultJSON(name string, defs ...string) string {
	r := `{"success":true,"message":"Loaded \"` + name + `\": call it directly.","toolName":"` + name + `","tools":[` + strings.Join(defs, ",") + `]}`
	s, _ := json.Marshal(r)
	return string(s)
}

// The session's messages, turn by turn: each request is the one before plus what the
// model and its tools added.
var idxTurns = []string{
	`{"role":"system","content":"Use the catalog."},{"role":"user","content":"open an issue about the crash"}`,
	`,{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_L1","type":"function","function":{"name":"load_tool","arguments":"{\"name\":\"github_create_issue\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"toolu_L1","content":` + loadResultJSON("github_create_issue", idxIssueDef) + `}`,
	`,{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_C1","type":"function","function":{"name":"github_create_issue","arguments":"{\"title\":\"crash\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"toolu_C1","content":"created #7"},{"role":"user","content":"now commit the fix"}` +
		`,{"role":"assistant","content":"Loading git.","tool_calls":[{"id":"toolu_L2","type":"function","function":{"name":"load_tool","arguments":"{\"name\":\"git.commit\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"toolu_L2","content":` + loadResultJSON("git.commit", idxCommitDef) + `}`,
}

func idxBody(turns int, stream bool) string {
	s := `{"model":"claude-sonnet-4-5",`
	if stream {
		s += `"stream":true,"stream_options":{"include_usage":true},`
	}
	return s + `"messages":[` + strings.Join(idxTurns[:turns], "") + `],"tools":` + idxTools + `}`
}

// recorder is a fake Messages API that answers each request with the next handler and
// keeps what it got.
type recorder struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func (rec *recorder) serve(t *testing.T, answers ...http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != testKey || r.Header.Get("anthropic-version") != "2023-06-01" {
			t.Errorf("request %s %s with key %q version %q", r.Method, r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"))
		}
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		n := len(rec.bodies)
		rec.bodies, rec.headers = append(rec.bodies, body), append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		if n >= len(answers) {
			t.Errorf("request %d unexpected", n+1)
			w.WriteHeader(500)
			return
		}
		answers[n](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// uncached is body without its breakpoints, which move from turn to turn by design.
func uncached(body []byte) []byte {
	return bytes.ReplaceAll(body, []byte(`,"cache_control":{"type":"ephemeral"}`), nil)
}

func TestIndex_SessionKeepsThePrefixAcrossLoads(t *testing.T) {
	commitWire := nameRule.Wire("git.commit")
	var rec recorder
	srv := rec.serve(t,
		jsonAnswer(200, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_L1","name":"load_tool","input":{"name":"github_create_issue"}}],`+
			`"stop_reason":"tool_use","usage":{"input_tokens":900,"cache_creation_input_tokens":2100,"cache_read_input_tokens":0,"output_tokens":20}}`),
		jsonAnswer(200, `{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_C1","name":"github_create_issue","input":{"title":"crash"}}],`+
			`"stop_reason":"tool_use","usage":{"input_tokens":150,"cache_creation_input_tokens":60,"cache_read_input_tokens":3000,"output_tokens":18}}`),
		sseEvents(evStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_C2","name":"`+commitWire+`","input":{}}}`,
			jsonDelta(0, `{"message":`), jsonDelta(0, `"fix crash"}`), evStop0, messageDelta("tool_use", 12), evMsgStop))
	b := newBackend(t, srv.URL, Options{})

	for turn := 1; turn <= 3; turn++ {
		stream := turn == 3
		resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(idxBody(turn, stream)), Model: "claude-sonnet-4-5", Stream: stream})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if resp.Strategy != "index" {
			t.Errorf("turn %d: strategy %q, want index", turn, resp.Strategy)
		}
		var calls []oai.ToolCall
		var usage *oai.Usage
		if !stream {
			var c oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &c); err != nil || len(c.Choices) != 1 {
				t.Fatalf("turn %d: not a chat.completion: %s", turn, resp.Body)
			}
			if c.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("turn %d: finish_reason %q", turn, c.Choices[0].FinishReason)
			}
			calls, usage = c.Choices[0].Message.ToolCalls, c.Usage
		} else {
			chunks, err := drain(t, resp.Stream)
			if err != io.EOF {
				t.Fatalf("stream ended with %v", err)
			}
			args := ""
			for _, raw := range chunks {
				var ch oai.Chunk
				if err := json.Unmarshal([]byte(raw), &ch); err != nil {
					t.Fatalf("chunk %s: %v", raw, err)
				}
				if ch.Usage != nil {
					usage = ch.Usage
				}
				for _, c := range ch.Choices {
					for _, tc := range c.Delta.ToolCalls {
						if tc.ID != "" {
							calls = append(calls, tc)
						}
						args += tc.Function.Arguments
					}
				}
			}
			if len(calls) == 1 {
				calls[0].Function.Arguments = args
			}
		}
		want := [][3]string{{"toolu_L1", "load_tool", `{"name":"github_create_issue"}`}, {"toolu_C1", "github_create_issue", `{"title":"crash"}`}, {"toolu_C2", "git.commit", `{"message":"fix crash"}`}}[turn-1]
		if len(calls) != 1 || calls[0].ID != want[0] || calls[0].Function.Name != want[1] || calls[0].Function.Arguments != want[2] {
			t.Errorf("turn %d: calls %+v, want %v", turn, calls, want)
		}
		if usage == nil || usage.PromptTokensDetails == nil {
			t.Fatalf("turn %d: no usage with cached tokens", turn)
		}
		wantCached := []int{0, 3000, 3000}[turn-1]
		if usage.PromptTokensDetails.CachedTokens != wantCached {
			t.Errorf("turn %d: cached_tokens %d, want %d", turn, usage.PromptTokensDetails.CachedTokens, wantCached)
		}
	}

	if len(rec.bodies) != 3 {
		t.Fatalf("%d upstream requests, want 3", len(rec.bodies))
	}
	var tools0, system0 []byte
	for i, body := range rec.bodies {
		if got := rec.headers[i].Get("anthropic-beta"); got != "advanced-tool-use-2025-11-20" {
			t.Errorf("request %d: anthropic-beta %q", i+1, got)
		}
		if n := breakpoints(t, body); n < 1 || n > 4 {
			t.Errorf("request %d: %d breakpoints", i+1, n)
		}
		tools, _ := oai.Get(body, "tools")
		system, _ := oai.Get(body, "system")
		if i == 0 {
			tools0, system0 = tools, system
			continue
		}
		if !bytes.Equal(tools, tools0) || !bytes.Equal(system, system0) {
			t.Errorf("request %d: tools or system moved:\n%s\n%s\nwas\n%s\n%s", i+1, system, tools, system0, tools0)
		}
		// Apart from the breakpoints, the request before is a prefix of this one up to
		// its last message's content.
		prev, cur := uncached(rec.bodies[i-1]), uncached(body)
		end := bytes.Index(prev, []byte(`]}],"tools":`))
		if end < 0 || !bytes.HasPrefix(cur, prev[:end]) {
			t.Errorf("request %d does not extend request %d:\n%s\n%s", i+1, i, prev, cur)
		}
	}
	// The tools: the callable ones whole, the rest deferred, in the catalog's order; the
	// breakpoint on the system prompt, none on a deferred tool.
	var sent []struct {
		Name         string          `json:"name"`
		DeferLoading bool            `json:"defer_loading"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if err := json.Unmarshal(tools0, &sent); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sent {
		got = append(got, s.Name+map[bool]string{true: "/deferred"}[s.DeferLoading])
		if s.CacheControl != nil {
			t.Errorf("breakpoint on tool %s", s.Name)
		}
	}
	if diff := cmp.Diff([]string{"search_tools", "load_tool", "get_weather", "github_create_issue/deferred", commitWire + "/deferred", "slack_post/deferred"}, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// Each load result is a tool_reference to exactly the tools it loaded, and its text
	// without their definitions.
	results := toolResults(t, rec.bodies[2])
	for id, want := range map[string]string{"toolu_L1": "github_create_issue", "toolu_L2": commitWire} {
		r := results[id]
		if len(r) != 2 || r[0].Type != "tool_reference" || r[0].ToolName != want || r[1].Type != "text" {
			t.Errorf("%s: content %+v, want a tool_reference to %s then text", id, r, want)
			continue
		}
		if strings.Contains(r[1].Text, "parameters") || strings.Contains(r[1].Text, `"tools"`) || !strings.Contains(r[1].Text, `"success":true`) {
			t.Errorf("%s: text %s", id, r[1].Text)
		}
	}
	if r := results["toolu_C1"]; len(r) != 0 {
		t.Errorf("an ordinary result became blocks: %+v", r)
	}
	if !bytes.Contains(rec.bodies[2], []byte(`{"type":"tool_result","tool_use_id":"toolu_C1","content":"created #7"}`)) {
		t.Errorf("an ordinary tool result changed:\n%s", rec.bodies[2])
	}
}

type resultBlock struct {
	Type     string `json:"type"`
	ToolName string `json:"tool_name"`
	Text     string `json:"text"`
}

// toolResults maps each tool_result's tool_use_id to its content blocks (none for a
// string content).
func toolResults(t *testing.T, body []byte) map[string][]resultBlock {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	out := map[string][]resultBlock{}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type != "tool_result" {
				continue
			}
			var blocks []resultBlock
			json.Unmarshal(c.Content, &blocks)
			out[c.ToolUseID] = blocks
		}
	}
	return out
}

func TestIndex_NoDeferredToolsNoBeta(t *testing.T) {
	var rec recorder
	srv := rec.serve(t, jsonAnswer(200, `{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	b := newBackend(t, srv.URL, Options{})
	body := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"toolu_L1","type":"function","function":{"name":"load_tool","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"toolu_L1","content":` + loadResultJSON("get_weather", weatherTool) + `}],"tools":[` + idxLoadTool + `,` + weatherTool + `]}`
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "remove" || rec.headers[0].Get("anthropic-beta") != "" {
		t.Errorf("strategy %q, anthropic-beta %q: a request without deferred tools is as before", resp.Strategy, rec.headers[0].Get("anthropic-beta"))
	}
	if bytes.Contains(rec.bodies[0], []byte("tool_reference")) || bytes.Contains(rec.bodies[0], []byte("defer_loading")) {
		t.Errorf("body:\n%s", rec.bodies[0])
	}
}

func TestLoadResult_Cases(t *testing.T) {
	names, err := toolname.New(nameRule, []string{"git.commit", "slack_post", "github_create_issue"})
	if err != nil {
		t.Fatal(err)
	}
	deferred := map[string]bool{"git.commit": true, "slack_post": true, "github_create_issue": true}
	for _, tc := range []struct {
		name, content string
		want          string // "" when the message stays an ordinary tool result
	}{
		{"two_tools_once_each", loadResultJSON("git.commit", idxCommitDef, idxSlackDef, idxCommitDef),
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"` + nameRule.Wire("git.commit") + `"},{"type":"tool_reference","tool_name":"slack_post"},` +
				`{"type":"text","text":"{\"success\":true,\"message\":\"Loaded \\\"git.commit\\\": call it directly.\",\"toolName\":\"git.commit\"}"}]}`},
		{"a_definition_not_deferred_stays_in_the_text", loadResultJSON("slack_post", idxSlackDef, weatherTool),
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"slack_post"},` +
				`{"type":"text","text":"{\"success\":true,\"message\":\"Loaded \\\"slack_post\\\": call it directly.\",\"toolName\":\"slack_post\",\"tools\":[` +
				strings.ReplaceAll(weatherTool, `"`, `\"`) + `]}"}]}`},
		{"already_loaded_adds_nothing", loadResultJSON("slack_post"), ""},
		{"failure", `"{\"success\":false,\"message\":\"no tool named x\"}"`, ""},
		{"not_json_text", `"loaded it"`, ""},
		{"parts_not_a_string", `[{"type":"text","text":"{\"tools\":[]}"}]`, ""},
		{"tools_not_an_array", `"{\"tools\":{\"type\":\"function\"}}"`, ""},
		{"broken_definition", `"{\"tools\":[{\"function\":{\"name\":7}}]}"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &inMessage{Role: "tool", ToolCallID: "toolu_1", Content: json.RawMessage(tc.content)}
			b, ok := loadResult(m, names, deferred)
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v: %s", ok, b.json)
			}
			if diff := cmp.Diff(tc.want, string(b.json)); ok && diff != "" {
				t.Errorf("tool_result (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzLoadResult feeds any tool message content through the load-result reader: it
// never panics, and what it makes is a JSON tool_result whose references name deferred
// tools, each once, followed by one text block that holds no definition it references.
func FuzzLoadResult(f *testing.F) {
	f.Add(loadResultJSON("git.commit", idxCommitDef, idxSlackDef))
	f.Add(loadResultJSON("slack_post", idxSlackDef, weatherTool))
	f.Add(`"{\"tools\":[{\"function\":{\"name\":\"slack_post\"}},1]}"`)
	f.Add(`"{\"tools\":[{\"function\":{\"name\":\"slack_post\"}}],\"tools\":[]}"`)
	f.Add(`"{\"tools\":[{\"function\":{\"name\":\"slack_post\"}}]} x"`)
	f.Add(`null`)
	names, err := toolname.New(nameRule, []string{"git.commit", "slack_post"})
	if err != nil {
		f.Fatal(err)
	}
	deferred := map[string]bool{"git.commit": true, "slack_post": true}
	f.Fuzz(func(t *testing.T, content string) {
		b, ok := loadResult(&inMessage{Role: "tool", ToolCallID: "toolu_1", Content: json.RawMessage(content)}, names, deferred)
		if !ok {
			return
		}
		var r struct {
			Type    string        `json:"type"`
			Content []resultBlock `json:"content"`
		}
		if err := json.Unmarshal(b.json, &r); err != nil || r.Type != "tool_result" || len(r.Content) < 2 {
			t.Fatalf("not a tool_result with references and text: %s", b.json)
		}
		seen := map[string]bool{}
		for _, c := range r.Content[:len(r.Content)-1] {
			if c.Type != "tool_reference" || seen[c.ToolName] {
				t.Fatalf("block %+v: %s", c, b.json)
			}
			seen[c.ToolName] = true
			if n := names.Real(c.ToolName); !deferred[n] || names.Wire(n) != c.ToolName {
				t.Fatalf("reference to %q, not a deferred tool: %s", c.ToolName, b.json)
			}
		}
		if last := r.Content[len(r.Content)-1]; last.Type != "text" {
			t.Fatalf("last block %+v", last)
		}
	})
}

// Under search.auto_load search_tools loads what it finds and its result carries the
// definitions: it becomes references like load_tool's. A search result without them
// (no auto_load) and a load answered by another call's id stay ordinary results.
func TestIndex_AutoLoadSearchResultBecomesReferences(t *testing.T) {
	plainSearch, _ := json.Marshal(`{"results":[{"name":"slack_post"}],"message":"Found 1 tool."}`)
	body := `{"model":"m","messages":[{"role":"user","content":"post it"},` +
		`{"role":"assistant","tool_calls":[{"id":"toolu_S1","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"slack\"}"}},` +
		`{"id":"toolu_S2","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"x\"}"}},` +
		`{"id":"toolu_W1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"toolu_S1","content":` + loadResultJSON("slack_post", idxSlackDef) + `},` +
		`{"role":"tool","tool_call_id":"toolu_S2","content":` + string(plainSearch) + `},` +
		`{"role":"tool","tool_call_id":"toolu_W1","content":` + loadResultJSON("slack_post", idxSlackDef) + `}],` +
		`"tools":[` + idxSearchTools + `,` + weatherTool + `,` + deferredDef(idxSlackDef) + `]}`
	tr, err := translateRequest([]byte(body), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	results := toolResults(t, tr.body)
	if r := results["toolu_S1"]; len(r) != 2 || r[0].Type != "tool_reference" || r[0].ToolName != "slack_post" {
		t.Errorf("search_tools' load: %+v", r)
	}
	for _, id := range []string{"toolu_S2", "toolu_W1"} {
		if r := results[id]; len(r) != 0 {
			t.Errorf("%s became blocks: %+v", id, r)
		}
	}
	if n := bytes.Count(tr.body, []byte("tool_reference")); n != 1 {
		t.Errorf("%d references:\n%s", n, tr.body)
	}
}
