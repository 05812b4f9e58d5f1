package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// Event sequences follow "Streaming Messages" (platform.claude.com/docs, build with
// Claude): message_start with the input usage, content_block_start/_delta/_stop per
// block (text_delta, input_json_delta with partial_json, thinking_delta), ping at any
// point, message_delta with stop_reason and cumulative usage, then message_stop.
const (
	evStart     = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":3000,"output_tokens":1}}}`
	evPing      = `{"type":"ping"}`
	evTextStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evStop0     = `{"type":"content_block_stop","index":0}`
	evMsgStop   = `{"type":"message_stop"}`
)

func textDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return `{"type":"content_block_delta","index":` + itoa(i) + `,"delta":{"type":"text_delta","text":` + string(b) + `}}`
}

func jsonDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return `{"type":"content_block_delta","index":` + itoa(i) + `,"delta":{"type":"input_json_delta","partial_json":` + string(b) + `}}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func messageDelta(stop string, out int) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + `}}`
}

const chunkHead = `{"id":"chatcmpl-msg_01","object":"chat.completion.chunk","created":1700000000,"model":"claude-sonnet-4-5-20250929","choices":`

const hello = `{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`

func TestStream_TextChunksAsOpenAIStreamsThem(t *testing.T) {
	f := newFake(t, sseEvents(evStart, evTextStart, evPing, textDelta(0, "Hel"), textDelta(0, "lo"), evStop0, messageDelta("end_turn", 15), evMsgStop))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(hello)), Model: "claude-sonnet-4-5", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != nil || resp.Stream == nil || resp.Cache != backends.CacheReported || resp.Strategy != "" {
		t.Fatalf("response: body %v stream %v cache %q strategy %q", resp.Body != nil, resp.Stream != nil, resp.Cache, resp.Strategy)
	}
	if got := resp.Header.Get("X-Request-Id"); got != "req_123" {
		t.Errorf("X-Request-Id = %q", got)
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v, want io.EOF", err)
	}
	want := []string{
		chunkHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		chunkHead + `[],"usage":{"prompt_tokens":3025,"completion_tokens":15,"total_tokens":3040,"prompt_tokens_details":{"cached_tokens":3000}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(f.lastBody()), `"stream":true`) {
		t.Errorf("Anthropic was not asked to stream: %s", f.lastBody())
	}
	if _, err := resp.Stream.Next(); err == nil {
		t.Error("Next after the end returned a chunk")
	}
}

// A namespaced tool goes out under its wire name and comes back, in every tool-call
// chunk, under the client's name; the arguments arrive in fragments, thinking is dropped.
func TestStream_ToolNamesRoundTrip(t *testing.T) {
	wire := nameRule.Wire("git.commit")
	f := newFake(t, sseEvents(evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"should commit"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
		evStop0,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		textDelta(1, "Committing."),
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"`+wire+`","input":{}}}`,
		jsonDelta(2, ""),
		jsonDelta(2, `{"message": "fi`),
		jsonDelta(2, `x typo"}`),
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"search","input":{}}}`,
		jsonDelta(3, `{}`),
		`{"type":"content_block_stop","index":3}`,
		messageDelta("tool_use", 40), evMsgStop))
	b := newBackend(t, f.URL, Options{})
	body := `{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"commit"}],"tools":[` + commitTool + `,` + searchTool + `]}`
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "remove" {
		t.Errorf("strategy %q, want remove", resp.Strategy)
	}
	sent := string(f.lastBody())
	if !strings.Contains(sent, `"name":"`+wire+`"`) || strings.Contains(sent, "git.commit") {
		t.Errorf("Anthropic saw the real name or not the wire one: %s", sent)
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v", err)
	}
	want := []string{
		chunkHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"content":"Committing."},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"toolu_01","type":"function","function":{"name":"git.commit","arguments":""}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\": \"fi"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x typo\"}"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"toolu_02","type":"function","function":{"name":"search","arguments":""}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
		chunkHead + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		chunkHead + `[],"usage":{"prompt_tokens":3025,"completion_tokens":40,"total_tokens":3065,"prompt_tokens_details":{"cached_tokens":3000}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	// The arguments fragments join into the client's JSON.
	var args strings.Builder
	for _, c := range got {
		var ch oai.Chunk
		json.Unmarshal([]byte(c), &ch)
		for _, tc := range ch.Choices {
			for _, call := range tc.Delta.ToolCalls {
				if *call.Index == 0 {
					args.WriteString(call.Function.Arguments)
				}
			}
		}
	}
	if args.String() != `{"message": "fix typo"}` {
		t.Errorf("joined arguments = %s", args.String())
	}
}

func TestStream_TruncatedWithoutMessageStop(t *testing.T) {
	f := newFake(t, sseEvents(evStart, evTextStart, textDelta(0, "Hel"), messageDelta("end_turn", 2)))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(hello)), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, backends.ErrTruncated) {
		t.Errorf("end = %v, want ErrTruncated", err)
	}
	if len(got) != 2 {
		t.Errorf("got %d chunks before the end, want 2 (role, Hel): %v", len(got), got)
	}
}

func TestStream_ErrorEventEndsTheStream(t *testing.T) {
	f := newFake(t, sseEvents(evStart, evTextStart, textDelta(0, "Hel"),
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, evMsgStop))
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(hello)), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(t, resp.Stream)
	be := asError(t, err)
	if be.Status != http.StatusServiceUnavailable || !strings.Contains(be.Message, "Overloaded") {
		t.Errorf("end = %d %q, want 503 with Anthropic's message", be.Status, be.Message)
	}
	if len(got) != 2 {
		t.Errorf("got %d chunks, want 2", len(got))
	}
}

func TestStream_ProtocolBreaksAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
	}{
		{"delta_before_start", []string{textDelta(0, "x")}},
		{"delta_for_unopened_block", []string{evStart, textDelta(3, "x")}},
		{"json_delta_for_text_block", []string{evStart, evTextStart, jsonDelta(0, "{")}},
		{"not_json", []string{evStart, `{"type":`}},
		{"two_message_starts", []string{evStart, evStart}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChunker("claude", nil, meta{})
			var err error
			for _, ev := range tc.events {
				if _, err = c.event([]byte(ev)); err != nil {
					break
				}
			}
			if be := asError(t, err); be.Status != http.StatusBadGateway {
				t.Errorf("status %d", be.Status)
			}
		})
	}
}

func TestStream_NonEventStreamAnswerIsAnError(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{"id":"msg_01","type":"message","content":[]}`))
	b := newBackend(t, f.URL, Options{})
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(streamBody(hello)), Stream: true})
	if be := asError(t, err); be.Code != "upstream_not_streaming" {
		t.Errorf("code %q", be.Code)
	}
}

func TestStream_CloseCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: "+evStart+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	})
	b := newBackend(t, f.URL, Options{})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(streamBody(hello)), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Stream.Next(); err != nil {
		t.Fatal(err)
	}
	resp.Stream.Close()
	resp.Stream.Close() // twice is fine
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("Anthropic never saw the request cancelled")
	}
}
