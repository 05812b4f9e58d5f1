package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// recorder is door.Events keeping what was written; after failAfter events (when > 0)
// it reports the client gone.
type recorder struct {
	names     []string
	data      [][]byte
	failAfter int
}

var errGone = errors.New("client gone")

func (r *recorder) Event(name string, data []byte) error {
	if r.failAfter > 0 && len(r.names) >= r.failAfter {
		return errGone
	}
	r.names = append(r.names, name)
	r.data = append(r.data, append([]byte(nil), data...))
	return nil
}

const writerTools = `[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},` +
	`{"type":"custom","name":"patch","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}},` +
	`{"type":"namespace","name":"crm","description":"CRM","tools":[{"type":"function","name":"lookup"}]},` +
	`{"type":"tool_search","execution":"client"},{"type":"web_search"}]`

// writerToolsEchoed is writerTools as the response echoes them: the function tool with
// the members the Open Responses FunctionTool requires.
const writerToolsEchoed = `[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"description":null,"strict":true},` +
	`{"type":"custom","name":"patch","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}},` +
	`{"type":"namespace","name":"crm","description":"CRM","tools":[{"type":"function","name":"lookup"}]},` +
	`{"type":"tool_search","execution":"client"},{"type":"web_search"}]`

const writerRequest = `{"model":"qwen","input":"hi","temperature":0.5,"metadata":{"k":"v"},"tools":` + writerTools + `}`

var (
	created   = int64(1700000000)
	completed = time.Unix(1700000100, 0)
)

func newTestWriter(t *testing.T, ev door.Events, stream bool, body string) *Writer {
	t.Helper()
	w := NewWriter(ev, stream, "resp_test", mustDecode(t, body, Options{}))
	w.Now = func() time.Time { return completed }
	return w
}

func call(id, name, args string) oai.ToolCall {
	return oai.ToolCall{ID: id, Type: "function", Function: oai.FunctionCall{Name: name, Arguments: args}}
}

// play is a whole answer: reasoning and text alternating, then four calls of each kind.
func play(w *Writer) error {
	steps := []func() error{
		func() error { return w.Begin(door.Head{Model: "qwen", Created: created}) },
		func() error { return w.Reasoning("Let me ") },
		func() error { return w.Reasoning("think.") },
		func() error { return w.Text("Hello") },
		func() error { return w.Text("") },
		func() error { return w.Text(", world") },
		func() error { return w.Reasoning("more") },
		func() error { return w.Text("!") },
		func() error { return w.ToolCall(call("call_1", "get_weather", `{"city":"Paris"}`)) },
		func() error { return w.ToolCall(call("call_2", "patch", `{"input":"*** Begin\n<x>"}`)) },
		func() error { return w.ToolCall(call("call_3", "tool_search", ` {"query":"crm"}`)) },
		func() error { return w.ToolCall(call("call_4", "crm.lookup", `{}`)) },
		func() error {
			return w.End(oai.FinishToolCalls, &oai.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120,
				PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: 60}})
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// wantOutput is play's output, with ID<n> for the item ids.
var wantOutput = []string{
	`{"id":"ID0","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Let me think."}]}`,
	`{"id":"ID1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello, world"}],"role":"assistant"}`,
	`{"id":"ID2","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"more"}]}`,
	`{"id":"ID3","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"!"}],"role":"assistant"}`,
	`{"id":"ID4","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"get_weather"}`,
	`{"id":"ID5","type":"custom_tool_call","call_id":"call_2","name":"patch","input":"*** Begin\n<x>"}`,
	`{"id":"ID6","type":"tool_search_call","status":"completed","call_id":"call_3","execution":"client","arguments":{"query":"crm"}}`,
	`{"id":"ID7","type":"function_call","status":"completed","arguments":"{}","call_id":"call_4","namespace":"crm","name":"lookup"}`,
}

var idPrefixes = []string{"rs_", "msg_", "rs_", "msg_", "fc_", "ctc_", "tsc_", "fc_"}

// withIDs checks the output's ids (prefix, 48 hex digits, all distinct) and returns
// wantOutput with them in place.
func withIDs(t *testing.T, output []json.RawMessage) []string {
	t.Helper()
	if len(output) != len(wantOutput) {
		t.Fatalf("%d output items, want %d: %s", len(output), len(wantOutput), rawArray(output))
	}
	seen := map[string]bool{}
	want := make([]string, len(wantOutput))
	for i, it := range output {
		var v struct{ ID string }
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^`+idPrefixes[i]+`[0-9a-f]{48}$`).MatchString(v.ID) || seen[v.ID] {
			t.Errorf("item %d id %q", i, v.ID)
		}
		seen[v.ID] = true
		want[i] = strings.Replace(wantOutput[i], `"ID`+string(rune('0'+i))+`"`, `"`+v.ID+`"`, 1)
	}
	return want
}

func TestWriterWhole(t *testing.T) {
	w := newTestWriter(t, nil, false, writerRequest)
	if err := play(w); err != nil {
		t.Fatal(err)
	}
	if w.Status() != "completed" {
		t.Errorf("Status = %q", w.Status())
	}
	want := withIDs(t, w.Output())
	for i, it := range w.Output() {
		if string(it) != want[i] {
			t.Errorf("output[%d]:\n got %s\nwant %s", i, it, want[i])
		}
	}
	wantBody := `{"id":"resp_test","object":"response","created_at":1700000000,"status":"completed","background":false,"completed_at":1700000100,` +
		`"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"qwen",` +
		`"output":[` + strings.Join(want, ",") + `],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,` +
		`"reasoning":{"effort":null,"summary":null},"safety_identifier":null,"store":true,"temperature":0.5,"text":{"format":{"type":"text"}},` +
		`"tool_choice":"auto","tools":` + writerToolsEchoed + `,"top_logprobs":0,"top_p":1,"presence_penalty":0,"frequency_penalty":0,"service_tier":"default","truncation":"disabled",` +
		`"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":60},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":120},` +
		`"user":null,"metadata":{"k":"v"},"maskgate":{"dropped_tools":["web_search"]}}` // the hosted tool left out
	if string(w.Body()) != wantBody {
		t.Errorf("Body:\n got %s\nwant %s", w.Body(), wantBody)
	}

	// The SDK reads it.
	var resp responses.Response
	if err := json.Unmarshal(w.Body(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "Hello, world!" || resp.Usage.InputTokensDetails.CachedTokens != 60 || len(resp.Output) != 8 {
		t.Errorf("SDK view: text %q usage %+v", resp.OutputText(), resp.Usage)
	}
	if fc := resp.Output[7].AsFunctionCall(); fc.Namespace != "crm" || fc.Name != "lookup" || fc.CallID != "call_4" {
		t.Errorf("namespaced call: %+v", fc)
	}
	if cc := resp.Output[5].AsCustomToolCall(); cc.Input != "*** Begin\n<x>" || cc.Name != "patch" {
		t.Errorf("custom call: %+v", cc)
	}
	if ts := resp.Output[6].AsToolSearchCall(); ts.CallID != "call_3" || ts.Execution != "client" {
		t.Errorf("tool search call: %+v", ts)
	}
	if rs := resp.Output[0].AsReasoning(); len(rs.Content) != 1 || rs.Content[0].Text != "Let me think." {
		t.Errorf("reasoning: %+v", rs)
	}

	// History: one assistant message, the same as the output sent back as input.
	wantMsgs := `[{"role":"assistant","content":"Hello, world!","reasoning_content":"Let me think.more","tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"patch","arguments":"{\"input\":\"*** Begin\\n<x>\"}"}},` +
		`{"id":"call_3","type":"function","function":{"name":"tool_search","arguments":"{\"query\":\"crm\"}"}},` +
		`{"id":"call_4","type":"function","function":{"name":"crm.lookup","arguments":"{}"}}]}]`
	if got := joinMsgs(w.Messages()); got != wantMsgs {
		t.Errorf("Messages:\n got %s\nwant %s", got, wantMsgs)
	}
	again := mustDecode(t, `{"model":"qwen","input":`+string(rawArray(w.Output()))+`}`, Options{})
	if got := joinMsgs(again.InputMessages); got != wantMsgs {
		t.Errorf("the output as input:\n got %s\nwant %s", got, wantMsgs)
	}
}

// event is one streamed event as the tests read it.
type event struct {
	Type           string          `json:"type"`
	SequenceNumber int64           `json:"sequence_number"`
	ItemID         string          `json:"item_id"`
	OutputIndex    int             `json:"output_index"`
	ContentIndex   int             `json:"content_index"`
	Delta          string          `json:"delta"`
	Text           string          `json:"text"`
	Arguments      string          `json:"arguments"`
	Input          string          `json:"input"`
	Item           json.RawMessage `json:"item"`
	Part           json.RawMessage `json:"part"`
	Response       json.RawMessage `json:"response"`
	Code           *string         `json:"code"`
	Message        string          `json:"message"`
}

// readEvents parses every event, checks its name is its type, that sequence numbers
// count from 0, and that the SDK knows each event.
func readEvents(t *testing.T, rec *recorder) []event {
	t.Helper()
	var out []event
	for i, data := range rec.data {
		var e event
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("event %d: %v: %s", i, err, data)
		}
		if !strings.HasPrefix(string(data), `{"type":`) {
			t.Errorf("event %d does not start with its type: %s", i, data)
		}
		if e.Type != rec.names[i] || e.SequenceNumber != int64(i) {
			t.Errorf("event %d: name %q type %q sequence_number %d", i, rec.names[i], e.Type, e.SequenceNumber)
		}
		var u responses.ResponseStreamEventUnion
		if err := json.Unmarshal(data, &u); err != nil || u.AsAny() == nil {
			t.Errorf("the SDK does not read event %d (%v): %s", i, err, data)
		}
		out = append(out, e)
	}
	return out
}

func TestWriterStream(t *testing.T) {
	rec := &recorder{}
	w := newTestWriter(t, rec, true, writerRequest)
	if err := play(w); err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, rec)
	wantTypes := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.delta",
		"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
		"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed",
	}
	if got := strings.Join(rec.names, "\n"); got != strings.Join(wantTypes, "\n") {
		t.Fatalf("event sequence:\n%s\nwant\n%s", got, strings.Join(wantTypes, "\n"))
	}

	// created and in_progress carry the response in progress, with no output yet.
	for _, e := range evs[:2] {
		var r struct {
			ID, Status string
			Output     []json.RawMessage
			Usage      *json.RawMessage
		}
		if err := json.Unmarshal(e.Response, &r); err != nil || r.ID != "resp_test" || r.Status != "in_progress" || r.Output == nil || len(r.Output) != 0 || r.Usage != nil {
			t.Errorf("%s: %s", e.Type, e.Response)
		}
	}

	// Rebuild each item from its events: the deltas add up to the done text, and the
	// done item is the final response's.
	final := evs[len(evs)-1].Response
	var resp struct{ Output []json.RawMessage }
	if err := json.Unmarshal(final, &resp); err != nil {
		t.Fatal(err)
	}
	want := withIDs(t, resp.Output)
	acc := map[int]string{}
	ids := map[int]string{}
	nextIndex := 0
	for _, e := range evs {
		switch e.Type {
		case "response.output_item.added":
			if e.OutputIndex != nextIndex {
				t.Errorf("item added at %d, want %d", e.OutputIndex, nextIndex)
			}
			nextIndex++
			var it struct{ ID string }
			_ = json.Unmarshal(e.Item, &it)
			ids[e.OutputIndex] = it.ID
		case "response.output_text.delta", "response.reasoning_text.delta", "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			if e.ItemID != ids[e.OutputIndex] {
				t.Errorf("%s for item %q at %d, which is %q", e.Type, e.ItemID, e.OutputIndex, ids[e.OutputIndex])
			}
			acc[e.OutputIndex] += e.Delta
		case "response.output_text.done", "response.reasoning_text.done":
			if e.Text != acc[e.OutputIndex] {
				t.Errorf("%s text %q, deltas %q", e.Type, e.Text, acc[e.OutputIndex])
			}
		case "response.function_call_arguments.done":
			if e.Arguments != acc[e.OutputIndex] {
				t.Errorf("%s arguments %q, deltas %q", e.Type, e.Arguments, acc[e.OutputIndex])
			}
		case "response.custom_tool_call_input.done":
			if e.Input != acc[e.OutputIndex] {
				t.Errorf("%s input %q, deltas %q", e.Type, e.Input, acc[e.OutputIndex])
			}
		case "response.output_item.done":
			if string(e.Item) != want[e.OutputIndex] {
				t.Errorf("item %d done:\n got %s\nwant %s", e.OutputIndex, e.Item, want[e.OutputIndex])
			}
		}
	}
	if acc[0] != "Let me think." || acc[1] != "Hello, world" || acc[4] != `{"city":"Paris"}` || acc[5] != "*** Begin\n<x>" {
		t.Errorf("deltas %v", acc)
	}

	// The final response is what the whole mode writes.
	whole := newTestWriter(t, nil, false, writerRequest)
	if err := play(whole); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(final, whole.Body()) {
		t.Errorf("stream's final response:\n%s\nwhole body:\n%s", final, whole.Body())
	}
	if !bytes.Equal(w.Body(), final) {
		t.Errorf("a stream's Body is not its final response: %s", w.Body())
	}
	if joinMsgs(w.Messages()) != joinMsgs(whole.Messages()) {
		t.Errorf("Messages differ between modes")
	}
}

func TestWriterIncomplete(t *testing.T) {
	for _, stream := range []bool{false, true} {
		rec := &recorder{}
		w := newTestWriter(t, rec, stream, `{"model":"m","input":"x","max_output_tokens":5}`)
		if err := w.Begin(door.Head{Model: "m", Created: created}); err != nil {
			t.Fatal(err)
		}
		if err := w.Text("abc"); err != nil {
			t.Fatal(err)
		}
		if err := w.End(oai.FinishLength, nil); err != nil {
			t.Fatal(err)
		}
		body := w.Body()
		if stream {
			evs := readEvents(t, rec)
			last := evs[len(evs)-1]
			if last.Type != "response.incomplete" {
				t.Fatalf("last event %s", last.Type)
			}
			if evs[len(evs)-2].Type != "response.output_item.done" || !strings.Contains(string(evs[len(evs)-2].Item), `"status":"incomplete"`) {
				t.Errorf("the cut message: %s", evs[len(evs)-2].Item)
			}
			body = last.Response
		}
		var r struct {
			Status            string
			IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
			CompletedAt       *int64                   `json:"completed_at"`
			MaxOutputTokens   int                      `json:"max_output_tokens"`
			Usage             json.RawMessage
			Output            []struct {
				Status  string
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != "incomplete" || r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens" ||
			r.CompletedAt != nil || string(r.Usage) != zeroUsage || r.MaxOutputTokens != 5 || len(r.Output) != 1 ||
			r.Output[0].Status != "incomplete" || r.Output[0].Content[0].Text != "abc" {
			t.Errorf("stream %v: %s", stream, body)
		}
		if w.Status() != "incomplete" {
			t.Errorf("Status = %q", w.Status())
		}
	}
}

func TestWriterFail(t *testing.T) {
	rec := &recorder{}
	w := newTestWriter(t, rec, true, `{"model":"m","input":"x"}`)
	_ = w.Begin(door.Head{Model: "m", Created: created})
	_ = w.Text("par")
	w.Fail(door.Error{Status: 502, Type: "upstream_error", Message: "engine died"})
	w.Fail(door.Error{Status: 500, Message: "again"}) // once only
	if err := w.End("stop", nil); err != nil {        // nothing after a failure
		t.Fatal(err)
	}
	evs := readEvents(t, rec)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta error response.failed"
	if strings.Join(types, " ") != want {
		t.Fatalf("events %q", types)
	}
	if e := evs[5]; e.Code == nil || *e.Code != "server_error" || e.Message != "engine died" || !strings.Contains(string(rec.data[5]), `"param":null`) {
		t.Errorf("error event %s", rec.data[5])
	}
	var r struct {
		Status string
		Error  struct{ Code, Message string }
		Output []struct {
			Status  string
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(evs[6].Response, &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "failed" || r.Error.Code != "server_error" || r.Error.Message != "engine died" ||
		len(r.Output) != 1 || r.Output[0].Status != "incomplete" || r.Output[0].Content[0].Text != "par" {
		t.Errorf("failed response %s", evs[6].Response)
	}
	if w.Status() != "failed" {
		t.Errorf("Status = %q", w.Status())
	}

	// Failing before anything began still opens the stream first; codes map.
	rec = &recorder{}
	w = newTestWriter(t, rec, true, `{"model":"m","input":"x"}`)
	w.Fail(door.Error{Status: 429, Type: "rate_limit_error", Message: "slow down"})
	evs = readEvents(t, rec)
	if len(evs) != 4 || evs[0].Type != "response.created" || evs[2].Type != "error" || *evs[2].Code != "rate_limit_exceeded" {
		t.Errorf("events %q", rec.names)
	}
	if got := responseErrorCode(door.Error{Status: 400, Type: "invalid_request_error", Code: "invalid_value"}); got != "invalid_prompt" {
		t.Errorf("code %q", got)
	}
	// Codex compacts on context_length_exceeded in response.failed: it passes as it is.
	if got := responseErrorCode(door.Error{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded"}); got != "context_length_exceeded" {
		t.Errorf("code %q", got)
	}
	if got := responseErrorCode(door.Error{Status: 400, Code: "invalid_image_url"}); got != "invalid_image_url" {
		t.Errorf("code %q", got)
	}

	// Not streaming, the body is the failed response.
	w = newTestWriter(t, nil, false, `{"model":"m","input":"x"}`)
	_ = w.Begin(door.Head{Model: "m", Created: created})
	w.Fail(door.Error{Status: 500, Type: "server_error", Message: "boom"})
	if !strings.Contains(string(w.Body()), `"status":"failed","background":false,"completed_at":null,"error":{"code":"server_error","message":"boom"}`) {
		t.Errorf("body %s", w.Body())
	}
}

func TestWriterClientGone(t *testing.T) {
	rec := &recorder{failAfter: 3}
	w := newTestWriter(t, rec, true, `{"model":"m","input":"x"}`)
	if err := w.Begin(door.Head{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Text("a"); !errors.Is(err, errGone) {
		t.Fatalf("Text after the client left: %v", err)
	}
	if err := w.Text("b"); !errors.Is(err, errGone) {
		t.Errorf("Text: %v", err)
	}
	if err := w.ToolCall(call("c", "f", "{}")); !errors.Is(err, errGone) {
		t.Errorf("ToolCall: %v", err)
	}
	if len(rec.names) != 3 {
		t.Errorf("%d events written", len(rec.names))
	}
}

func TestWriterEdgeCases(t *testing.T) {
	// An empty answer; Begin's model wins over the request's; no call id gets one.
	w := newTestWriter(t, nil, false, `{"model":"alias","input":"x"}`)
	_ = w.Begin(door.Head{Model: "real", Created: created})
	_ = w.ToolCall(call("", "unknown_tool", "not json"))
	_ = w.End("stop", nil)
	var r struct {
		Model  string
		Output []struct{ Type, CallID, Name, Arguments string } `json:"output"`
	}
	if err := json.Unmarshal(w.Body(), &r); err != nil {
		t.Fatal(err)
	}
	o := r.Output[0]
	if r.Model != "real" || o.Type != "function_call" || o.Name != "unknown_tool" || o.Arguments != "not json" || !strings.HasPrefix(o.Name, "unknown") {
		t.Errorf("%s", w.Body())
	}
	var raw []map[string]any
	_ = json.Unmarshal(rawArray(w.Output()), &raw)
	if id, _ := raw[0]["call_id"].(string); !regexp.MustCompile(`^call_[0-9a-f]{48}$`).MatchString(id) {
		t.Errorf("call_id %q", id)
	}

	// Custom input that is not {"input"}: the arguments are the input. Tool search
	// arguments that are not an object are a string.
	w = newTestWriter(t, nil, false, `{"model":"m","tools":[{"type":"custom","name":"p"},{"type":"tool_search","execution":"client"}]}`)
	_ = w.ToolCall(call("c1", "p", "raw text"))
	_ = w.ToolCall(call("c2", "tool_search", "crm tools"))
	_ = w.End("tool_calls", nil)
	out := w.Output()
	if !strings.Contains(string(out[0]), `"input":"raw text"`) || !strings.Contains(string(out[1]), `"arguments":"crm tools"`) {
		t.Errorf("output %s", rawArray(out))
	}
	if w.Status() != "completed" {
		t.Errorf("status %q", w.Status())
	}

	w = newTestWriter(t, nil, false, `{"model":"m"}`)
	_ = w.Begin(door.Head{})
	_ = w.End("stop", nil)
	if !strings.Contains(string(w.Body()), `"created_at":1700000100`) {
		t.Errorf("empty answer: %s", w.Body())
	}
}

func TestErrorBody(t *testing.T) {
	got := string(ErrorBody(door.Error{Status: 400, Type: "invalid_request_error", Param: "input[2].type", Code: "invalid_value", Message: "bad"}))
	want := `{"error":{"message":"bad","type":"invalid_request_error","param":"input[2].type","code":"invalid_value"}}`
	if got != want {
		t.Errorf("ErrorBody = %s, want %s", got, want)
	}
	if got := string(ErrorBody(door.Error{Status: 502, Message: "x"})); got != `{"error":{"message":"x","type":"server_error","param":null,"code":null}}` {
		t.Errorf("ErrorBody = %s", got)
	}
}
