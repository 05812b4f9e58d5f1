package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// zeroUsage is the usage object of a response whose engine told none.
const zeroUsage = `{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}`

// The empty message's ids: "msg_", the first 24 hex digits of sha256("resp_test") (the
// response's part of its items' ids, for an id not the gateway's own) and the first 24
// of sha256("resp_test/<output index>").
const (
	emptyMsg0 = "msg_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230"
	emptyMsg1 = "msg_c7b5afed0cff09e921e32e978381ad5475653bf10f3257ed"
)

func emptyMessage(id, status string) string {
	content := `[]`
	if status == "completed" {
		content = `[{"type":"output_text","annotations":[],"logprobs":[],"text":""}]`
	}
	return `{"id":"` + id + `","type":"message","status":"` + status + `","content":` + content + `,"role":"assistant"}`
}

// emptyMessageEvents are the events of an empty message at output index idx, numbered
// from seq, in the order OpenAI sends a message's (no delta: there is no text).
func emptyMessageEvents(id, idx string, seq int) []string {
	n := func() string { seq++; return itoa(seq - 1) }
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":""}`
	at := `"item_id":"` + id + `","output_index":` + idx + `,"content_index":0`
	return []string{
		`{"type":"response.output_item.added","sequence_number":` + n() + `,"output_index":` + idx + `,"item":` + emptyMessage(id, "in_progress") + `}`,
		`{"type":"response.content_part.added","sequence_number":` + n() + `,` + at + `,"part":` + part + `}`,
		`{"type":"response.output_text.done","sequence_number":` + n() + `,` + at + `,"text":"","logprobs":[]}`,
		`{"type":"response.content_part.done","sequence_number":` + n() + `,` + at + `,"part":` + part + `}`,
		`{"type":"response.output_item.done","sequence_number":` + n() + `,"output_index":` + idx + `,"item":` + emptyMessage(id, "completed") + `}`,
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestWriterEmptyTurn: a completed turn with no text and no call answers one assistant
// message whose text is "", whole and streamed (the Writer is the HTTP and the
// WebSocket door's sink alike), so the OpenAI Agents SDK finds its final output
// instead of calling again; a call, a cut turn or a warm-up gets none. Every ended
// response has a usage object.
func TestWriterEmptyTurn(t *testing.T) {
	cases := []struct {
		name   string
		play   func(w *Writer) error
		finish string
		warmUp bool
		// output is the response's output, item by item; events the streamed events
		// from the first output event to the one before the last (response.completed or
		// response.incomplete).
		output []string
		events []string
	}{
		{name: "nothing", finish: oai.FinishStop,
			output: []string{emptyMessage(emptyMsg0, "completed")},
			events: emptyMessageEvents(emptyMsg0, "0", 2)},
		{name: "empty deltas", finish: oai.FinishStop, play: func(w *Writer) error { return w.Text("") },
			output: []string{emptyMessage(emptyMsg0, "completed")},
			events: emptyMessageEvents(emptyMsg0, "0", 2)},
		{name: "reasoning only", finish: oai.FinishStop, play: func(w *Writer) error { return w.Reasoning("hm") },
			output: []string{
				`{"id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hm"}]}`,
				emptyMessage(emptyMsg1, "completed"),
			},
			events: append([]string{
				`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"reasoning","summary":[],"content":[]}}`,
				`{"type":"response.content_part.added","sequence_number":3,"item_id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":""}}`,
				`{"type":"response.reasoning_text.delta","sequence_number":4,"item_id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"content_index":0,"delta":"hm"}`,
				`{"type":"response.reasoning_text.done","sequence_number":5,"item_id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"content_index":0,"text":"hm"}`,
				`{"type":"response.content_part.done","sequence_number":6,"item_id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":"hm"}}`,
				`{"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"rs_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hm"}]}}`,
			}, emptyMessageEvents(emptyMsg1, "1", 8)...)},
		{name: "a call", finish: oai.FinishToolCalls, play: func(w *Writer) error { return w.ToolCall(call("c1", "f", "{}")) },
			output: []string{`{"id":"fc_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"function_call","status":"completed","arguments":"{}","call_id":"c1","name":"f"}`},
			events: []string{
				`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"fc_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"function_call","status":"in_progress","arguments":"","call_id":"c1","name":"f"}}`,
				`{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"delta":"{}"}`,
				`{"type":"response.function_call_arguments.done","sequence_number":4,"item_id":"fc_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","output_index":0,"arguments":"{}"}`,
				`{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"fc_c7b5afed0cff09e921e32e971e2275fafbf4d0ddc1edd230","type":"function_call","status":"completed","arguments":"{}","call_id":"c1","name":"f"}}`,
			}},
		// Cut at max_output_tokens before any text: incomplete, and no message claims
		// an answer (OpenAI's incomplete response lists what was written).
		{name: "cut", finish: oai.FinishLength},
		// generate: false on a socket: no output at all, and the next turn's history
		// gains no assistant message.
		{name: "warm-up", finish: oai.FinishStop, warmUp: true},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			rec := &recorder{}
			w := newTestWriter(t, rec, stream, `{"model":"m","input":"hi"}`)
			w.WarmUp = tc.warmUp
			if err := w.Begin(door.Head{Created: created}); err != nil {
				t.Fatal(err)
			}
			if tc.play != nil {
				if err := tc.play(w); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.End(tc.finish, nil); err != nil {
				t.Fatal(err)
			}
			var r struct {
				Status string
				Output []json.RawMessage
				Usage  json.RawMessage
			}
			if err := json.Unmarshal(w.Body(), &r); err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(r.Output))
			for i, it := range r.Output {
				got[i] = string(it)
			}
			if strings.Join(got, "\n") != strings.Join(tc.output, "\n") {
				t.Errorf("%s, stream %v: output\n%s\nwant\n%s", tc.name, stream, strings.Join(got, "\n"), strings.Join(tc.output, "\n"))
			}
			if string(r.Usage) != zeroUsage {
				t.Errorf("%s, stream %v: usage %s, want %s", tc.name, stream, r.Usage, zeroUsage)
			}
			// What the SDK gives an application: the Agents SDK's final output is the
			// last message's text.
			var resp responses.Response
			if err := json.Unmarshal(w.Body(), &resp); err != nil {
				t.Fatal(err)
			}
			if resp.OutputText() != "" || len(resp.Output) != len(tc.output) {
				t.Errorf("%s, stream %v: SDK output_text %q, %d items", tc.name, stream, resp.OutputText(), len(resp.Output))
			}
			if !stream {
				if len(rec.names) != 0 {
					t.Errorf("%s: events when whole: %v", tc.name, rec.names)
				}
				continue
			}
			// response.created, response.in_progress, the output's events, the end.
			if len(rec.data) < 3 {
				t.Fatalf("%s: events %v", tc.name, rec.names)
			}
			evs := make([]string, 0, len(rec.data))
			for i, d := range rec.data[2 : len(rec.data)-1] {
				if name := rec.names[2+i]; !strings.Contains(string(d), `"type":"`+name+`"`) {
					t.Errorf("%s: event %s carries %s", tc.name, name, d)
				}
				evs = append(evs, string(d))
			}
			if strings.Join(evs, "\n") != strings.Join(tc.events, "\n") {
				t.Errorf("%s: events\n%s\nwant\n%s", tc.name, strings.Join(evs, "\n"), strings.Join(tc.events, "\n"))
			}
			last, end := rec.data[len(rec.data)-1], "response.completed"
			if tc.finish == oai.FinishLength {
				end = "response.incomplete"
			}
			var ev struct {
				Type           string
				SequenceNumber int `json:"sequence_number"`
				Response       json.RawMessage
			}
			if err := json.Unmarshal(last, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Type != end || ev.SequenceNumber != 2+len(tc.events) || string(ev.Response) != string(w.Body()) {
				t.Errorf("%s: last event %s", tc.name, last)
			}
		}
	}
}

// TestWriterEmptyTurnHistory: the empty message is history as the client would send
// it back: one assistant message with content "", the same chat message either way.
func TestWriterEmptyTurnHistory(t *testing.T) {
	w := newTestWriter(t, nil, false, `{"model":"m","input":"hi"}`)
	if err := w.End(oai.FinishStop, nil); err != nil {
		t.Fatal(err)
	}
	ms := w.Messages()
	if len(ms) != 1 || string(ms[0]) != `{"role":"assistant","content":""}` {
		t.Errorf("history %s", rawArray(ms))
	}
	back := mustDecode(t, `{"model":"m","input":[`+emptyMessage(emptyMsg0, "completed")+`]}`, Options{})
	if len(back.InputMessages) != 1 || string(back.InputMessages[0]) != string(ms[0]) {
		t.Errorf("sent back: %s", rawArray(back.InputMessages))
	}
}
