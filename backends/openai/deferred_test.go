package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// A session under strategy index as the planner writes it for a LoadDeferred backend:
// the meta-tools, the client's callable tool, then the rest of the catalog with
// "defer_loading": true as the tool object's last member, the same bytes every turn.
// Shapes of the Responses side: API reference, Responses (create; the response object;
// streaming events), and the "Tool search" guide (tool_search with execution client,
// tool_search_call, tool_search_output carrying the loaded tools, defer_loading).
const (
	idxSearchTools = `{"type":"function","function":{"name":"search_tools","description":"Search the catalog.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}}`
	idxLoadTool    = `{"type":"function","function":{"name":"load_tool","description":"Load a tool. Index:\ngithub: github_create_issue: Open an issue.\ngit: git.commit: Commit staged files.","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	idxWeather     = `{"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":{ "type":"object", "properties":{"city":{"type":"string"}} }}}`
	idxIssueDef    = `{"type":"function","function":{"name":"github_create_issue","description":"Open an issue.","parameters":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}}`
	idxCommitDef   = `{"type":"function","function":{"name":"git.commit","description":"Commit staged files.","parameters":{"type":"object","properties":{"message":{"type":"string"}}}}}`
	idxSlackDef    = `{"type":"function","function":{"name":"slack_post","description":"Post a message.","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}`
)

func deferredDef(def string) string { return def[:len(def)-1] + `,"defer_loading":true}` }

var idxTools = `[` + idxSearchTools + `,` + idxLoadTool + `,` + idxWeather + `,` +
	deferredDef(idxIssueDef) + `,` + deferredDef(idxCommitDef) + `,` + deferredDef(idxSlackDef) + `]`

func loadResultJSON(name string, defs ...string) string {
	r := `{"success":true,"message":"Loaded \"` + name + `\": call it directly.","toolName":"` + name + `","tools":[` + strings.Join(defs, ",") + `]}`
	s, _ := json.Marshal(r)
	return string(s)
}

var idxTurns = []string{
	`{"role":"system","content":"Use the catalog."},{"role":"user","content":"open an issue about the crash"}`,
	`,{"role":"assistant","content":null,"tool_calls":[{"id":"call_L1","type":"function","function":{"name":"load_tool","arguments":"{\"name\":\"github_create_issue\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"call_L1","content":` + loadResultJSON("github_create_issue", idxIssueDef) + `}`,
	`,{"role":"assistant","content":null,"tool_calls":[{"id":"call_C1","type":"function","function":{"name":"github_create_issue","arguments":"{\"title\":\"crash\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"call_C1","content":"created #7"},{"role":"user","content":"now commit the fix"}` +
		`,{"role":"assistant","content":"Loading git.","tool_calls":[{"id":"call_L2","type":"function","function":{"name":"load_tool","arguments":"{\"name\":\"git.commit\"}"}}]}` +
		`,{"role":"tool","tool_call_id":"call_L2","content":` + loadResultJSON("git.commit", idxCommitDef) + `}`,
}

func idxBody(turns int, stream bool) string {
	s := `{"model":"gpt-5.4",`
	if stream {
		s += `"stream":true,"stream_options":{"include_usage":true},`
	}
	return s + `"messages":[` + strings.Join(idxTurns[:turns], "") + `],"tools":` + idxTools + `,"max_completion_tokens":500}`
}

// rsRecorder is a fake Responses API: POST /v1/responses answered by the next handler.
type rsRecorder struct {
	mu     sync.Mutex
	paths  []string
	bodies [][]byte
}

func (rec *rsRecorder) backend(t *testing.T, answers ...http.HandlerFunc) *Backend {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		n := len(rec.bodies)
		rec.paths, rec.bodies = append(rec.paths, r.URL.Path), append(rec.bodies, body)
		rec.mu.Unlock()
		if n >= len(answers) {
			t.Errorf("request %d unexpected", n+1)
			w.WriteHeader(500)
			return
		}
		answers[n](w, r)
	}))
	t.Cleanup(srv.Close)
	b, err := New(Options{Options: openaicompat.Options{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rsJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

func rsEvents(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, data := range events {
			var ev struct {
				Type string `json:"type"`
			}
			json.Unmarshal([]byte(data), &ev)
			io.WriteString(w, "event: "+ev.Type+"\ndata: "+data+"\n\n")
		}
	}
}

const rsHead = `"id":"resp_1","object":"response","created_at":1700000000,"model":"gpt-5.4-2026-03-05"`

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// collect reads a chat answer, whole or streamed, into its calls and usage.
func collect(t *testing.T, resp *backends.Response) (calls []oai.ToolCall, usage *oai.Usage, finish string) {
	t.Helper()
	if resp.Stream == nil {
		var c oai.ChatCompletion
		if err := json.Unmarshal(resp.Body, &c); err != nil || len(c.Choices) != 1 || c.Object != "chat.completion" {
			t.Fatalf("not a chat.completion: %s", resp.Body)
		}
		return c.Choices[0].Message.ToolCalls, c.Usage, c.Choices[0].FinishReason
	}
	defer resp.Stream.Close()
	byIndex := map[int]*oai.ToolCall{}
	n := 0
	for {
		raw, err := resp.Stream.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		var ch oai.Chunk
		if err := json.Unmarshal(raw, &ch); err != nil || ch.Object != "chat.completion.chunk" {
			t.Fatalf("not a chunk: %s", raw)
		}
		if (n == 0) != (len(ch.Choices) > 0 && ch.Choices[0].Delta.Role == "assistant") {
			t.Errorf("chunk %d role: %s", n, raw)
		}
		n++
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("a streamed call without index: %s", raw)
				}
				k := byIndex[*tc.Index]
				if k == nil {
					k = &oai.ToolCall{ID: tc.ID, Type: tc.Type, Function: oai.FunctionCall{Name: tc.Function.Name}}
					byIndex[*tc.Index] = k
				}
				k.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	for i := 0; i < len(byIndex); i++ {
		calls = append(calls, *byIndex[i])
	}
	return calls, usage, finish
}

func TestIndex_SessionKeepsThePrefixAcrossLoads(t *testing.T) {
	names, err := newNames([]string{"git.commit"})
	if err != nil {
		t.Fatal(err)
	}
	commitWire := names.Wire("git.commit")
	var rec rsRecorder
	b := rec.backend(t,
		rsJSON(`{`+rsHead+`,"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[]},`+
			`{"type":"tool_search_call","id":"tsc_1","call_id":"call_L1","execution":"client","status":"completed","arguments":{"name":"github_create_issue"}}],`+
			`"usage":{"input_tokens":2400,"input_tokens_details":{"cached_tokens":0},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":2430}}`),
		rsJSON(`{`+rsHead+`,"status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_C1","name":"github_create_issue","arguments":"{\"title\":\"crash\"}","status":"completed"}],`+
			`"usage":{"input_tokens":2600,"input_tokens_details":{"cached_tokens":2304},"output_tokens":20,"total_tokens":2620}}`),
		rsEvents(
			`{"type":"response.created","sequence_number":0,"response":{`+rsHead+`,"status":"in_progress","output":[]}}`,
			`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","sequence_number":2,"output_index":0,"content_index":0,"item_id":"msg_1","delta":"Committing."}`,
			`{"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"type":"function_call","id":"fc_2","call_id":"call_C2","name":"`+commitWire+`","arguments":"","status":"in_progress"}}`,
			`{"type":"response.function_call_arguments.delta","sequence_number":4,"output_index":1,"item_id":"fc_2","delta":"{\"message\":"}`,
			`{"type":"response.function_call_arguments.delta","sequence_number":5,"output_index":1,"item_id":"fc_2","delta":"\"fix crash\"}"}`,
			`{"type":"response.output_item.done","sequence_number":6,"output_index":1,"item":{"type":"function_call","id":"fc_2","call_id":"call_C2","name":"`+commitWire+`","arguments":"{\"message\":\"fix crash\"}","status":"completed"}}`,
			`{"type":"response.completed","sequence_number":7,"response":{`+rsHead+`,"status":"completed","output":[],"usage":{"input_tokens":2900,"input_tokens_details":{"cached_tokens":2560},"output_tokens":25,"total_tokens":2925}}}`,
		))

	wantCalls := [][3]string{{"call_L1", "load_tool", `{"name":"github_create_issue"}`}, {"call_C1", "github_create_issue", `{"title":"crash"}`}, {"call_C2", "git.commit", `{"message":"fix crash"}`}}
	for turn := 1; turn <= 3; turn++ {
		stream := turn == 3
		resp, err := b.ChatCompletion(ctx(t), &backends.Request{Body: []byte(idxBody(turn, stream)), Model: "gpt-5.4", Stream: stream})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if resp.Strategy != "index" || resp.Cache != backends.CacheReported {
			t.Errorf("turn %d: strategy %q cache %q", turn, resp.Strategy, resp.Cache)
		}
		calls, usage, finish := collect(t, resp)
		w := wantCalls[turn-1]
		if len(calls) != 1 || calls[0].ID != w[0] || calls[0].Type != "function" || calls[0].Function.Name != w[1] || calls[0].Function.Arguments != w[2] || finish != "tool_calls" {
			t.Errorf("turn %d: calls %+v finish %q, want %v", turn, calls, finish, w)
		}
		wantCached := []int{0, 2304, 2560}[turn-1]
		if usage == nil || usage.PromptTokensDetails == nil || usage.PromptTokensDetails.CachedTokens != wantCached || usage.PromptTokens == 0 {
			t.Errorf("turn %d: usage %+v, want cached_tokens %d", turn, usage, wantCached)
		}
	}

	if len(rec.bodies) != 3 {
		t.Fatalf("%d upstream requests, want 3", len(rec.bodies))
	}
	var tools0 []byte
	for i, body := range rec.bodies {
		if rec.paths[i] != "/v1/responses" {
			t.Errorf("request %d went to %s", i+1, rec.paths[i])
		}
		if !json.Valid(body) {
			t.Fatalf("request %d is not JSON: %s", i+1, body)
		}
		tools, _ := oai.Get(body, "tools")
		if i == 0 {
			tools0 = tools
		} else if !bytes.Equal(tools, tools0) {
			t.Errorf("request %d: tools moved:\n%s\nwas\n%s", i+1, tools, tools0)
		}
		if i > 0 { // the request before is this one's prefix up to the end of its input
			prev := rec.bodies[i-1]
			end := bytes.Index(prev, []byte(`],"tools":`))
			if end < 0 || !bytes.HasPrefix(body, prev[:end]) {
				t.Errorf("request %d does not extend request %d:\n%s\n%s", i+1, i, prev, body)
			}
		}
	}
	wantTools := `[{"type":"function","name":"search_tools","description":"Search the catalog.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]},"strict":false},` +
		`{"type":"tool_search","execution":"client","description":"Load a tool. Index:\ngithub: github_create_issue: Open an issue.\ngit: git.commit: Commit staged files.","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},` +
		`{"type":"function","name":"get_weather","description":"Weather now.","parameters":{ "type":"object", "properties":{"city":{"type":"string"}} },"strict":false}]`
	if diff := cmp.Diff(wantTools, string(tools0)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The last request, item by item: each load_tool call a tool_search_call, each load
	// result a tool_search_output carrying exactly the loaded tool, deferred, then what
	// the result said.
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(rec.bodies[2], &req); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"message","role":"system","content":"Use the catalog."}`,
		`{"type":"message","role":"user","content":"open an issue about the crash"}`,
		`{"type":"tool_search_call","call_id":"call_L1","execution":"client","status":"completed","arguments":{"name":"github_create_issue"}}`,
		`{"type":"tool_search_output","call_id":"call_L1","execution":"client","status":"completed","tools":[{"type":"function","name":"github_create_issue","description":"Open an issue.","parameters":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},"strict":false,"defer_loading":true}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"{\"success\":true,\"message\":\"Loaded \\\"github_create_issue\\\": call it directly.\",\"toolName\":\"github_create_issue\"}"}]}`,
		`{"type":"function_call","call_id":"call_C1","name":"github_create_issue","arguments":"{\"title\":\"crash\"}"}`,
		`{"type":"function_call_output","call_id":"call_C1","output":"created #7"}`,
		`{"type":"message","role":"user","content":"now commit the fix"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Loading git."}]}`,
		`{"type":"tool_search_call","call_id":"call_L2","execution":"client","status":"completed","arguments":{"name":"git.commit"}}`,
		`{"type":"tool_search_output","call_id":"call_L2","execution":"client","status":"completed","tools":[{"type":"function","name":"` + commitWire + `","description":"Commit staged files.","parameters":{"type":"object","properties":{"message":{"type":"string"}}},"strict":false,"defer_loading":true}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"{\"success\":true,\"message\":\"Loaded \\\"git.commit\\\": call it directly.\",\"toolName\":\"git.commit\"}"}]}`,
	}
	var got []string
	for _, it := range req.Input {
		got = append(got, string(it))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if !bytes.HasSuffix(rec.bodies[2], []byte(`,"max_output_tokens":500,"stream":true,"store":false}`)) {
		t.Errorf("request 3 ends %s", rec.bodies[2][len(rec.bodies[2])-80:])
	}
}

func TestIndex_WithoutDeferredToolsChatCompletionsAsBefore(t *testing.T) {
	f := &fakeOpenAI{call: "get_weather"}
	b := newBackend(t, f, false)
	body := `{"model":"gpt-5.4","messages":[{"role":"user","content":"hi"}],"tools":[` + idxLoadTool + `,` + idxWeather + `]}`
	resp, err := b.ChatCompletion(ctx(t), &backends.Request{Body: []byte(body), Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy == "index" || string(f.got) != body {
		t.Errorf("strategy %q; sent %s", resp.Strategy, f.got)
	}
	if k := b.LoadsTools(); k != backends.LoadDeferred {
		t.Errorf("LoadsTools = %v", k)
	}
	if k := newBackend(t, f, true).LoadsTools(); k != backends.LoadNone {
		t.Errorf("an API without allowed_tools: LoadsTools = %v", k)
	}
}

func TestIndex_RefusesWhatResponsesCannotCarry(t *testing.T) {
	for _, tc := range []struct{ member, param string }{
		{`"stop":["END"]`, "stop"}, {`"n":2`, "n"}, {`"response_format":{"type":"json_object"}`, "response_format"},
		{`"tool_choice":"sometimes"`, "tool_choice"}, {`"max_tokens":0`, "max_tokens"},
	} {
		body := strings.Replace(idxBody(1, false), `,"max_completion_tokens":500`, ``, 1)
		body = strings.Replace(body, `{"model":"gpt-5.4",`, `{"model":"gpt-5.4",`+tc.member+`,`, 1)
		_, err := responsesRequest([]byte(body), "")
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != 400 || be.Param != tc.param {
			t.Errorf("%s: err %v, want a 400 naming %s", tc.member, err, tc.param)
		}
	}
}

func TestIndex_AnswerEnds(t *testing.T) {
	for _, tc := range []struct {
		name, body, finish, content string
		wantErr                     bool
	}{
		{"cut_by_max_output_tokens", `{` + rsHead + `,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Part"}]}],"usage":{"input_tokens":5,"output_tokens":9}}`, "length", "Part", false},
		{"text", `{` + rsHead + `,"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi "},{"type":"output_text","text":"there"}]}]}`, "stop", "Hi there", false},
		{"failed", `{` + rsHead + `,"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`, "", "", true},
		{"not_json", `{"output":`, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := completion("openai", []byte(tc.body), nil, loadTool)
			if tc.wantErr {
				var be *backends.Error
				if !errors.As(err, &be) || be.Status != http.StatusBadGateway {
					t.Fatalf("err %v, want a 502", err)
				}
				return
			}
			var c oai.ChatCompletion
			if err != nil || json.Unmarshal(out, &c) != nil || c.Choices[0].FinishReason != tc.finish || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != tc.content {
				t.Errorf("err %v: %s", err, out)
			}
		})
	}
}

func TestIndex_StreamEndsBeforeCompletedIsTruncated(t *testing.T) {
	var rec rsRecorder
	b := rec.backend(t, rsEvents(`{"type":"response.created","response":{`+rsHead+`,"status":"in_progress","output":[]}}`,
		`{"type":"response.output_text.delta","output_index":0,"delta":"Hel"}`))
	resp, err := b.ChatCompletion(ctx(t), &backends.Request{Body: []byte(idxBody(1, true)), Model: "gpt-5.4", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	var last error
	n := 0
	for last == nil {
		_, last = resp.Stream.Next()
		n++
	}
	if !errors.Is(last, backends.ErrTruncated) || n != 3 {
		t.Errorf("after %d reads: %v, want ErrTruncated after the role and the text", n, last)
	}
}

// FuzzStreamEvents feeds arbitrary event data, one per line, through the Responses
// chunker: never a panic, every chunk a chat.completion.chunk with the role in the first
// only, and a failure a client-facing *backends.Error.
func FuzzStreamEvents(f *testing.F) {
	f.Add(`{"type":"response.created","response":{"id":"r","model":"m"}}` + "\n" +
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"n","arguments":""}}` + "\n" +
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{}"}` + "\n" +
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3}}}`)
	f.Add(`{"type":"response.output_item.done","output_index":2,"item":{"type":"tool_search_call","call_id":"s","arguments":{"name":"x"}}}` + "\n" +
		`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":-1}}}`)
	f.Add(`{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`)
	f.Add(`{"type":"response.failed","response":{"error":null}}`)
	f.Add(`{"type":"response.output_item.added","item":null}`)
	f.Fuzz(func(t *testing.T, events string) {
		c := newChunker("openai", nil, loadTool)
		n := 0
		for _, line := range strings.Split(events, "\n") {
			chunks, err := c.event([]byte(line))
			for _, raw := range chunks {
				var ch oai.Chunk
				if json.Unmarshal(raw, &ch) != nil || ch.Object != "chat.completion.chunk" {
					t.Fatalf("not a chunk: %s", raw)
				}
				role := len(ch.Choices) > 0 && ch.Choices[0].Delta.Role != ""
				if role != (n == 0) {
					t.Fatalf("chunk %d: role %v: %s", n, role, raw)
				}
				if ch.Usage != nil && (ch.Usage.PromptTokens < 0 || ch.Usage.CompletionTokens < 0) {
					t.Fatalf("negative usage: %s", raw)
				}
				n++
			}
			if err != nil {
				var be *backends.Error
				if !errors.As(err, &be) || be.Status < 400 {
					t.Fatalf("event error %v is not a client-facing *backends.Error", err)
				}
				break
			}
		}
	})
}

// FuzzResponsesRequest checks that any Chat body either is a 400 or becomes a JSON
// Responses request, the same bytes every time.
func FuzzResponsesRequest(f *testing.F) {
	for turns := 1; turns <= 3; turns++ {
		f.Add(idxBody(turns, turns == 3))
	}
	f.Add(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"load_tool","arguments":"[]"}}]},{"role":"tool","tool_call_id":"a","content":"{\"tools\":[1]}"}],"tools":[]}`)
	f.Fuzz(func(t *testing.T, body string) {
		r, err := responsesRequest([]byte(body), "")
		if err != nil {
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != http.StatusBadRequest {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if !json.Valid(r.body) {
			t.Fatalf("not JSON: %s", r.body)
		}
		again, _ := responsesRequest([]byte(body), "")
		if !bytes.Equal(r.body, again.body) {
			t.Fatalf("two translations differ")
		}
	})
}

// Under search.auto_load there is no load_tool: search_tools loads what it finds, and
// its result carries the definitions. It is then the tool search; a hidden load_tool
// exchange of progressive loading in history is a load as well.
func TestIndex_AutoLoadSearchIsTheToolSearch(t *testing.T) {
	body := `{"model":"gpt-5.4","messages":[{"role":"user","content":"post it"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_S1","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"slack\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_S1","content":` + loadResultJSON("slack_post", idxSlackDef) + `},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_L1","type":"function","function":{"name":"load_tool","arguments":"{\"name\":\"github_create_issue\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_L1","content":` + loadResultJSON("github_create_issue", idxIssueDef) + `}],` +
		`"tools":[` + idxSearchTools + `,` + idxWeather + `,` + deferredDef(idxIssueDef) + `,` + deferredDef(idxSlackDef) + `]}`
	var rec rsRecorder
	b := rec.backend(t, rsJSON(`{`+rsHead+`,"status":"completed","output":[{"type":"tool_search_call","call_id":"call_S2","execution":"client","arguments":{"query":"git"}}]}`))
	resp, err := b.ChatCompletion(ctx(t), &backends.Request{Body: []byte(body), Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	calls, _, _ := collect(t, resp)
	if len(calls) != 1 || calls[0].Function.Name != "search_tools" || calls[0].Function.Arguments != `{"query":"git"}` {
		t.Errorf("calls %+v, want search_tools", calls)
	}
	sent := string(rec.bodies[0])
	for _, want := range []string{
		`{"type":"tool_search","execution":"client","description":"Search the catalog."`,
		`{"type":"tool_search_call","call_id":"call_S1","execution":"client","status":"completed","arguments":{"query":"slack"}}`,
		`{"type":"tool_search_output","call_id":"call_S1","execution":"client","status":"completed","tools":[{"type":"function","name":"slack_post",`,
		`{"type":"tool_search_call","call_id":"call_L1","execution":"client","status":"completed","arguments":{"name":"github_create_issue"}}`,
		`{"type":"tool_search_output","call_id":"call_L1","execution":"client","status":"completed","tools":[{"type":"function","name":"github_create_issue",`,
	} {
		if !strings.Contains(sent, want) {
			t.Errorf("request lacks %s:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, `"type":"function","name":"search_tools"`) || strings.Contains(sent, `"function_call"`) {
		t.Errorf("search_tools sent as a function:\n%s", sent)
	}
}
