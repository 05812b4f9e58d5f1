package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// recorder is a door.Events that keeps every event; failAfter > 0 makes the event of
// that number (1-based) and every later one fail, as a gone client.
type recorder struct {
	events    []event
	failAfter int
}

type event struct {
	name string
	data []byte
}

var errGone = errors.New("client gone")

func (r *recorder) Event(name string, data []byte) error {
	if r.failAfter > 0 && len(r.events)+1 >= r.failAfter {
		return errGone
	}
	r.events = append(r.events, event{name, append([]byte(nil), data...)})
	return nil
}

// op is one call on a sink.
type op func(s door.Sink) error

func reasoningOp(d string) op { return func(s door.Sink) error { return s.Reasoning(d) } }
func textOp(d string) op      { return func(s door.Sink) error { return s.Text(d) } }
func callOp(id, name, args string) op {
	return func(s door.Sink) error {
		return s.ToolCall(oai.ToolCall{ID: id, Type: "function", Function: oai.FunctionCall{Name: name, Arguments: args}})
	}
}
func endOp(finish string, u *oai.Usage) op {
	return func(s door.Sink) error { return s.End(finish, u) }
}

func run(t testing.TB, w *Writer, ops ...op) {
	t.Helper()
	if err := w.Begin(door.Head{Model: "claude-x", Created: 1}); err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if err := o(w); err != nil {
			t.Fatal(err)
		}
	}
}

func usage(prompt, cached, completion int) *oai.Usage {
	return &oai.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
		PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: cached}}
}

// answer is one sequence of sink calls used by the whole and stream tests.
func answer() []op {
	return []op{
		reasoningOp("Let me "), reasoningOp("think."),
		textOp("Hello"), textOp(", "), textOp("world \"<&>\"\n"),
		callOp("call_abc", "get_weather", ` {"city": "Paris"} `),
		callOp("toolu_01", "lookup", ""),
		callOp("", "broken", `{"unterminated`),
		endOp(oai.FinishToolCalls, usage(100, 60, 20)),
	}
}

func TestWriterWhole(t *testing.T) {
	w := NewWriter(nil, false, "msg_123", &Request{Model: "asked"})
	if w.Body() != nil {
		t.Fatal("Body before End is not nil")
	}
	run(t, w, answer()...)
	want := `{"id":"msg_123","type":"message","role":"assistant","model":"claude-x","content":[` +
		`{"type":"thinking","thinking":"Let me think.","signature":""},` +
		`{"type":"text","text":"Hello, world \"<&>\"\n"},` +
		`{"type":"tool_use","id":"call_abc","name":"get_weather","input":{"city": "Paris"}},` +
		`{"type":"tool_use","id":"toolu_01","name":"lookup","input":{}},` +
		`{"type":"tool_use","id":"toolu_123_2","name":"broken","input":{}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,` +
		`"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":60,"output_tokens":20}}`
	if got := string(w.Body()); got != want {
		t.Errorf("Body:\n got  %s\n want %s", got, want)
	}
	if w.BadArguments() != 1 {
		t.Errorf("BadArguments = %d, want 1", w.BadArguments())
	}
}

func TestWriterWholeNoUsageModelFromRequest(t *testing.T) {
	w := NewWriter(nil, false, "msg_1", &Request{Model: "asked"})
	if err := w.Begin(door.Head{}); err != nil {
		t.Fatal(err)
	}
	if err := w.End(oai.FinishLength, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"id":"msg_1","type":"message","role":"assistant","model":"asked","content":[],"stop_reason":"max_tokens","stop_sequence":null,` +
		`"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`
	if got := string(w.Body()); got != want {
		t.Errorf("Body:\n got  %s\n want %s", got, want)
	}
}

// streamed is what a client reading the events rebuilds, as the SDKs' MessageStream does.
type streamed struct {
	names   []string
	message map[string]any // message_start's message, content filled from the blocks
	blocks  []map[string]any
	delta   map[string]any // message_delta
}

func parseStream(t *testing.T, events []event) streamed {
	t.Helper()
	var s streamed
	open := -1
	partial := map[int]string{}
	for i, e := range events {
		var d map[string]any
		if err := json.Unmarshal(e.data, &d); err != nil {
			t.Fatalf("event %d (%s) is not JSON: %s", i, e.name, e.data)
		}
		if d["type"] != e.name {
			t.Fatalf("event %d: name %q, data type %v", i, e.name, d["type"])
		}
		s.names = append(s.names, e.name)
		switch e.name {
		case "message_start":
			if i != 0 {
				t.Fatalf("message_start at %d", i)
			}
			s.message = d["message"].(map[string]any)
		case "content_block_start":
			if open != -1 {
				t.Fatalf("event %d: block %d opened while %d is open", i, int(d["index"].(float64)), open)
			}
			idx := int(d["index"].(float64))
			if idx != len(s.blocks) {
				t.Fatalf("event %d: index %d, want %d", i, idx, len(s.blocks))
			}
			open = idx
			s.blocks = append(s.blocks, d["content_block"].(map[string]any))
		case "content_block_delta":
			idx := int(d["index"].(float64))
			if idx != open {
				t.Fatalf("event %d: delta for %d while %d is open", i, idx, open)
			}
			b, delta := s.blocks[idx], d["delta"].(map[string]any)
			switch delta["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + delta["text"].(string)
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + delta["thinking"].(string)
			case "input_json_delta":
				partial[idx] += delta["partial_json"].(string)
			default:
				t.Fatalf("event %d: delta type %v", i, delta["type"])
			}
		case "content_block_stop":
			idx := int(d["index"].(float64))
			if idx != open {
				t.Fatalf("event %d: stop for %d while %d is open", i, idx, open)
			}
			if js, ok := partial[idx]; ok {
				var input any
				if err := json.Unmarshal([]byte(js), &input); err != nil {
					t.Fatalf("block %d: partial_json %q does not parse", idx, js)
				}
				s.blocks[idx]["input"] = input
			}
			open = -1
		case "message_delta":
			if open != -1 {
				t.Fatalf("message_delta with block %d open", open)
			}
			s.delta = d
		}
	}
	if s.message != nil {
		content := make([]any, len(s.blocks))
		for i, b := range s.blocks {
			content[i] = b
		}
		s.message["content"] = content
	}
	return s
}

func TestWriterStream(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec, true, "msg_123", &Request{Model: "asked"})
	run(t, w, answer()...)
	s := parseStream(t, rec.events)

	wantNames := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(s.names, wantNames) {
		t.Errorf("events:\n got  %q\n want %q", s.names, wantNames)
	}

	wantStart := `{"type":"message_start","message":{"id":"msg_123","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,` +
		`"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`
	if got := string(rec.events[0].data); got != wantStart {
		t.Errorf("message_start:\n got  %s\n want %s", got, wantStart)
	}
	if got := string(rec.events[2].data); got != `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` {
		t.Errorf("thinking start: %s", got)
	}
	if got := string(rec.events[11].data); got != `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_abc","name":"get_weather","input":{}}}` {
		t.Errorf("tool_use start: %s", got)
	}
	if got := string(rec.events[12].data); got != `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Paris\"}"}}` {
		t.Errorf("input_json_delta: %s", got)
	}
	wantDelta := `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},` +
		`"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":60,"output_tokens":20}}`
	if got := string(rec.events[len(rec.events)-2].data); got != wantDelta {
		t.Errorf("message_delta:\n got  %s\n want %s", got, wantDelta)
	}

	// What the stream rebuilds is the whole mode's message, but for what only
	// message_delta carries.
	whole := NewWriter(nil, false, "msg_123", &Request{Model: "asked"})
	run(t, whole, answer()...)
	var want map[string]any
	if err := json.Unmarshal(whole.Body(), &want); err != nil {
		t.Fatal(err)
	}
	got := s.message
	got["stop_reason"] = s.delta["delta"].(map[string]any)["stop_reason"]
	got["usage"] = s.delta["usage"]
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("stream rebuilds\n %s\nwhole mode has\n %s", g, whole.Body())
	}
}

func TestWriterInterleaved(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec, true, "msg_1", nil)
	run(t, w, textOp("a"), textOp(""), reasoningOp("r1"), textOp("b"), reasoningOp(""), reasoningOp("r2"), endOp(oai.FinishStop, nil))
	s := parseStream(t, rec.events)
	var kinds []string
	for _, b := range s.blocks {
		kinds = append(kinds, fmt.Sprintf("%v:%v%v", b["type"], b["text"], b["thinking"]))
	}
	want := []string{"text:a<nil>", "thinking:<nil>r1", "text:b<nil>", "thinking:<nil>r2"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("blocks %q, want %q", kinds, want)
	}
	if sr := s.delta["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
		t.Errorf("stop_reason %v, want end_turn", sr)
	}
}

func TestWriterEmptyStream(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec, true, "msg_1", &Request{Model: "m"})
	run(t, w, endOp(oai.FinishStop, usage(7, 0, 1)))
	s := parseStream(t, rec.events)
	if want := []string{"message_start", "ping", "message_delta", "message_stop"}; !reflect.DeepEqual(s.names, want) {
		t.Errorf("events %q, want %q", s.names, want)
	}
	if m := s.message["model"]; m != "claude-x" {
		t.Errorf("model %v, want the Head's", m)
	}
	u := s.delta["usage"].(map[string]any)
	if u["input_tokens"] != 7.0 || u["cache_read_input_tokens"] != 0.0 || u["output_tokens"] != 1.0 {
		t.Errorf("usage %v", u)
	}
}

func TestWriterPing(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec, true, "msg_1", nil)
	if err := w.Ping(); err != nil || len(rec.events) != 0 {
		t.Fatalf("Ping before Begin: %v, %d events", err, len(rec.events))
	}
	run(t, w, textOp("a"))
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	run(t, w, textOp("b"), endOp(oai.FinishStop, nil))
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	s := parseStream(t, rec.events)
	want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "ping", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(s.names, want) {
		t.Errorf("events %q, want %q", s.names, want)
	}
	if got := s.blocks[0]["text"]; got != "ab" {
		t.Errorf("text %v, want ab", got)
	}
	if err := NewWriter(nil, false, "m", nil).Ping(); err != nil {
		t.Errorf("Ping not streaming: %v", err)
	}
}

func TestWriterFail(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec, true, "msg_1", nil)
	run(t, w, textOp("partial"))
	w.Fail(door.Error{Status: 503, Type: "upstream_error", Message: "backend \"x\" is overloaded"})
	if err := w.Text("more"); err != nil {
		t.Errorf("Text after Fail: %v", err)
	}
	w.Fail(door.Error{Status: 500, Message: "second"})
	last := rec.events[len(rec.events)-1]
	if last.name != "error" || string(last.data) != `{"type":"error","error":{"type":"overloaded_error","message":"backend \"x\" is overloaded"}}` {
		t.Errorf("last event %s %s", last.name, last.data)
	}
	if n := len(rec.events); rec.events[n-2].name != "content_block_delta" {
		t.Errorf("events after the error or a second error: %v", rec.events[n-2:])
	}

	whole := NewWriter(nil, false, "msg_1", nil)
	run(t, whole, textOp("partial"))
	whole.Fail(door.Error{Status: 429, Message: "slow down"})
	if f := whole.Failed(); f == nil || f.Status != 429 {
		t.Errorf("Failed = %+v", f)
	}
	if got := string(whole.Body()); got != `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}` {
		t.Errorf("Body after Fail: %s", got)
	}
}

func TestWriterClientGone(t *testing.T) {
	rec := &recorder{failAfter: 4} // message_start, ping, content_block_start; the delta fails
	w := NewWriter(rec, true, "msg_1", nil)
	if err := w.Begin(door.Head{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Text("a"); !errors.Is(err, errGone) {
		t.Fatalf("Text: %v, want errGone", err)
	}
	if err := w.ToolCall(oai.ToolCall{ID: "c", Function: oai.FunctionCall{Name: "f", Arguments: "{}"}}); !errors.Is(err, errGone) {
		t.Errorf("ToolCall after the client left: %v", err)
	}
	if err := w.End(oai.FinishStop, nil); !errors.Is(err, errGone) {
		t.Errorf("End after the client left: %v", err)
	}
	if len(rec.events) != 3 {
		t.Errorf("%d events written, want 3", len(rec.events))
	}
}

func TestStopReason(t *testing.T) {
	cases := []struct {
		finish string
		calls  bool
		want   string
	}{
		{"stop", false, "end_turn"},
		{"stop", true, "tool_use"},
		{"length", false, "max_tokens"},
		{"length", true, "max_tokens"},
		{"tool_calls", true, "tool_use"},
		{"tool_calls", false, "tool_use"},
		{"content_filter", false, "refusal"},
		{"", false, "end_turn"},
		{"something_else", false, "end_turn"},
	}
	for _, c := range cases {
		if got := StopReason(c.finish, c.calls); got != c.want {
			t.Errorf("StopReason(%q, %v) = %q, want %q", c.finish, c.calls, got, c.want)
		}
	}
}

func TestToolInput(t *testing.T) {
	cases := []struct {
		args, want string
		ok         bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{"  {\n\"a\" : [1, 2]}\t", "{\n\"a\" : [1, 2]}", true},
		{"", "{}", true},
		{"   ", "{}", true},
		{`[1,2]`, "{}", false},
		{`"x"`, "{}", false},
		{`null`, "{}", false},
		{`{"a":`, "{}", false},
		{`{"a":1}{"b":2}`, "{}", false},
		{"{\"a\":\"\xff\"}", "{\"a\":\"\uFFFD\"}", true},
	}
	for _, c := range cases {
		got, ok := toolInput(c.args)
		if got != c.want || ok != c.ok {
			t.Errorf("toolInput(%q) = %q, %v; want %q, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}

func TestErrorBody(t *testing.T) {
	cases := []struct {
		e    door.Error
		want string
	}{
		{door.Error{Status: 400, Message: "bad"}, "invalid_request_error"},
		{door.Error{Status: 422, Message: "bad"}, "invalid_request_error"},
		{door.Error{Status: 401, Message: "key"}, "authentication_error"},
		{door.Error{Status: 402, Message: "pay"}, "billing_error"},
		{door.Error{Status: 403, Message: "no"}, "permission_error"},
		{door.Error{Status: 404, Message: "model"}, "not_found_error"},
		{door.Error{Status: 413, Message: "big"}, "request_too_large"},
		{door.Error{Status: 429, Message: "slow"}, "rate_limit_error"},
		{door.Error{Status: 500, Message: "oops"}, "api_error"},
		{door.Error{Status: 502, Type: "upstream_error", Message: "up"}, "api_error"},
		{door.Error{Status: 503, Message: "busy"}, "overloaded_error"},
		{door.Error{Status: 529, Message: "busy"}, "overloaded_error"},
		{door.Error{Status: 504, Message: "late"}, "timeout_error"},
		{door.Error{Type: "rate_limit_error", Message: "mid-stream"}, "rate_limit_error"},
		{door.Error{Type: "upstream_error", Message: "mid-stream"}, "api_error"},
	}
	for _, c := range cases {
		var got struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		b := ErrorBody(c.e)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got.Type != "error" || got.Error.Type != c.want || got.Error.Message != c.e.Message {
			t.Errorf("ErrorBody(%+v) = %s, want type %s", c.e, b, c.want)
		}
	}
	if got := string(ErrorBody(door.Error{Status: 500})); got != `{"type":"error","error":{"type":"api_error","message":"Internal Server Error"}}` {
		t.Errorf("ErrorBody with no message: %s", got)
	}
}

// TestWriterRandom drives both modes with random sequences and checks that the stream
// always rebuilds the whole mode's content.
func TestWriterRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"", "a", "é", "\"", "\n", "<x>", "\u2028", "\xff", "🙂", "long text "}
	argsList := []string{"", "{}", `{"k":"v"}`, "not json", `[1]`, ` {"n": 1.5e3} `}
	for iter := 0; iter < 300; iter++ {
		var ops []op
		for i, n := 0, rng.Intn(12); i < n; i++ {
			switch rng.Intn(3) {
			case 0:
				ops = append(ops, textOp(pieces[rng.Intn(len(pieces))]))
			case 1:
				ops = append(ops, reasoningOp(pieces[rng.Intn(len(pieces))]))
			default:
				id := ""
				if rng.Intn(2) == 0 {
					id = fmt.Sprintf("call_%d", i)
				}
				ops = append(ops, callOp(id, "f", argsList[rng.Intn(len(argsList))]))
			}
		}
		finishes := []string{"stop", "length", "tool_calls", "content_filter"}
		ops = append(ops, endOp(finishes[rng.Intn(len(finishes))], usage(rng.Intn(100), rng.Intn(50), rng.Intn(30))))

		rec := &recorder{}
		sw := NewWriter(rec, true, "msg_r", nil)
		run(t, sw, ops...)
		s := parseStream(t, rec.events)
		ww := NewWriter(nil, false, "msg_r", nil)
		run(t, ww, ops...)
		var want map[string]any
		if err := json.Unmarshal(ww.Body(), &want); err != nil {
			t.Fatalf("whole body is not JSON: %s", ww.Body())
		}
		got := s.message
		got["stop_reason"] = s.delta["delta"].(map[string]any)["stop_reason"]
		got["usage"] = s.delta["usage"]
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			t.Fatalf("iteration %d: stream rebuilds\n %s\nwhole mode has\n %s", iter, g, ww.Body())
		}
		if u := want["usage"].(map[string]any); u["input_tokens"].(float64) < 0 {
			t.Fatalf("negative input_tokens: %v", u)
		}
		for _, e := range rec.events {
			if strings.Contains(string(e.data), "\xff") {
				t.Fatalf("invalid UTF-8 in an event: %q", e.data)
			}
		}
	}
}
