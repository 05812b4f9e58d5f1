package responses

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// A silent stream's keep-alive is response.in_progress again, numbered in the stream's
// order and carrying the output so far as a client's snapshot has it (the open
// message with its text so far); by the writer's clock, only once the stream has been
// silent for the interval, and never before the response began, after it ended, or
// when not streaming.
func TestWriterKeepAlive(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	const interval = 10 * time.Second
	r, _ := Decode([]byte(`{"model":"m","input":"hi"}`), Options{})
	var events []string // the stream's events and the keep-alives, in order
	w := NewWriter(eventsFunc(func(name string, data []byte) error {
		events = append(events, string(data))
		return nil
	}), true, "resp_0123456789abcdef01234567", r)
	w.Now = clock
	var sent []string
	write := func(name string, data []byte) error {
		if name != "response.in_progress" {
			t.Errorf("keep-alive named %q", name)
		}
		sent = append(sent, string(data))
		events = append(events, string(data))
		return nil
	}
	if wait, err := w.KeepAlive(interval, write); err != nil || wait != interval || len(sent) != 0 {
		t.Fatalf("before Begin: wait %v, err %v, sent %v", wait, err, sent)
	}
	_ = w.Begin(door.Head{Model: "m", Created: 1})
	_ = w.Reasoning("think")
	_ = w.Text("hel")
	now = now.Add(4 * time.Second)
	if wait, err := w.KeepAlive(interval, write); err != nil || wait != 6*time.Second || len(sent) != 0 {
		t.Fatalf("4 s into a silence: wait %v, err %v, sent %v", wait, err, sent)
	}
	now = now.Add(6 * time.Second)
	if wait, err := w.KeepAlive(interval, write); err != nil || wait != interval || len(sent) != 1 {
		t.Fatalf("10 s into a silence: wait %v, err %v, sent %v", wait, err, sent)
	}
	var ka struct {
		Type     string `json:"type"`
		Seq      int    `json:"sequence_number"`
		Response struct {
			ID     string            `json:"id"`
			Status string            `json:"status"`
			Output []json.RawMessage `json:"output"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(sent[0]), &ka); err != nil {
		t.Fatal(err)
	}
	if ka.Type != "response.in_progress" || ka.Seq != len(events)-1 || ka.Response.ID != "resp_0123456789abcdef01234567" || ka.Response.Status != "in_progress" ||
		len(ka.Response.Output) != 2 {
		t.Fatalf("keep-alive %s after %d events", sent[0], len(events)-1)
	}
	rsID, msgID := w.itemID("rs_", 0), w.itemID("msg_", 1)
	wantOut := []string{
		`{"id":"` + rsID + `","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think"}]}`,
		`{"id":"` + msgID + `","type":"message","status":"in_progress","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"hel"}],"role":"assistant"}`,
	}
	for i, want := range wantOut {
		if string(ka.Response.Output[i]) != want {
			t.Errorf("snapshot output[%d]\n%s\nwant\n%s", i, ka.Response.Output[i], want)
		}
	}
	// The stream goes on numbered after it.
	_ = w.Text("lo")
	_ = w.End(oai.FinishStop, nil)
	for i, ev := range events {
		var e struct {
			Seq int `json:"sequence_number"`
		}
		_ = json.Unmarshal([]byte(ev), &e)
		if e.Seq != i {
			t.Errorf("event %d numbered %d: %s", i, e.Seq, ev)
		}
	}
	if !strings.Contains(events[len(events)-1], `"text":"hello"`) {
		t.Errorf("last event %s", events[len(events)-1])
	}
	now = now.Add(time.Hour)
	if _, err := w.KeepAlive(interval, write); err != nil || len(sent) != 1 {
		t.Errorf("after End: err %v, sent %d", err, len(sent))
	}

	// Not streaming: nothing.
	whole := NewWriter(nil, false, "resp_x", r)
	whole.Now = clock
	_ = whole.Begin(door.Head{Model: "m"})
	now = now.Add(time.Hour)
	if _, err := whole.KeepAlive(interval, write); err != nil || len(sent) != 1 {
		t.Errorf("not streaming: err %v, sent %d", err, len(sent))
	}
}

// eventsFunc is a door.Events of a function.
type eventsFunc func(name string, data []byte) error

func (f eventsFunc) Event(name string, data []byte) error { return f(name, data) }
