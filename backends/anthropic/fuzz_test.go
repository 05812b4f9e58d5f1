package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// FuzzStreamEvents feeds arbitrary event data, one event per line, through the stream
// translator: it must never panic, every chunk must be a JSON chunk with the role in the
// first one only, and a failure must be a client-facing *backends.Error, never a panic
// or an error the gateway could not classify.
func FuzzStreamEvents(f *testing.F) {
	wire := nameRule.Wire("git.commit")
	f.Add(strings.Join([]string{evStart, evTextStart, textDelta(0, "Hi"), evStop0, messageDelta("end_turn", 2), evMsgStop}, "\n"))
	f.Add(strings.Join([]string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"` + wire + `","input":{}}}`,
		jsonDelta(0, `{"a":`), jsonDelta(0, `1}`), evStop0, messageDelta("tool_use", 9), evMsgStop}, "\n"))
	f.Add(strings.Join([]string{evStart, evPing, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, "\n"))
	f.Add(strings.Join([]string{evStart, `{"type":"message_delta","usage":{"input_tokens":-4,"output_tokens":null}}`, evMsgStop, evStart}, "\n"))
	f.Add(`{"type":"content_block_delta","index":-1,"delta":{}}`)
	names, err := toolname.New(nameRule, []string{"git.commit"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, events string) {
		c := newChunker("claude", names, meta{created: 1, model: "m"})
		n := 0
		for _, line := range strings.Split(events, "\n") {
			chunks, err := c.event([]byte(line))
			for _, ch := range chunks {
				var chunk oai.Chunk
				if err := json.Unmarshal(ch, &chunk); err != nil {
					t.Fatalf("chunk is not JSON: %s", ch)
				}
				if chunk.Object != "chat.completion.chunk" {
					t.Fatalf("chunk object %q", chunk.Object)
				}
				role := len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Role != ""
				if role != (n == 0) {
					t.Fatalf("chunk %d: role %v: %s", n, role, ch)
				}
				if chunk.Usage != nil && (chunk.Usage.PromptTokens < 0 || chunk.Usage.CompletionTokens < 0) {
					t.Fatalf("negative usage: %s", ch)
				}
				n++
			}
			if err != nil {
				var be *backends.Error
				if !errors.As(err, &be) || be.Status < 400 {
					t.Fatalf("event error %v is not a client-facing *backends.Error", err)
				}
				break // the stream ends at its first error
			}
		}
	})
}

// FuzzCompletion checks that any answer body either becomes a chat.completion or is a
// 502, never a panic.
func FuzzCompletion(f *testing.F) {
	f.Add([]byte(`{"id":"msg_01","type":"message","model":"c","content":[{"type":"text","text":"Hi"},{"type":"tool_use","id":"t","name":"git_commit_x","input":{"a":[1]}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3}}`))
	f.Add([]byte(`{"type":"message","content":[{"type":"tool_use","id":"t","name":"n","input":null}],"usage":{}}`))
	f.Add([]byte(`{"type":"error","error":{"type":"api_error","message":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := completion("claude", body, nil, meta{created: 1, model: "m"})
		if err != nil {
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != http.StatusBadGateway {
				t.Fatalf("error %v is not a 502", err)
			}
			return
		}
		var c oai.ChatCompletion
		if err := json.Unmarshal(out, &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("not a chat.completion: %s", out)
		}
	})
}

// FuzzTranslateRequest checks that any body is either refused with a 400 or becomes a
// JSON request with 1 to 4 breakpoints, the same bytes every time.
func FuzzTranslateRequest(f *testing.F) {
	for _, tc := range goldenCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, err := translateRequest(body, "", 100)
		if err != nil {
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != http.StatusBadRequest {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if !json.Valid(tr.body) {
			t.Fatalf("not JSON: %s", tr.body)
		}
		if n := breakpoints(t, tr.body); n < 1 || n > 4 {
			t.Fatalf("%d breakpoints: %s", n, tr.body)
		}
		again, _ := translateRequest(body, "", 100)
		if !bytes.Equal(tr.body, again.body) {
			t.Fatalf("two translations differ:\n%s\n%s", tr.body, again.body)
		}
	})
}

// breakpoints counts the cache_control members where the Messages API reads them: on
// system blocks, tools and message content blocks (a tool's schema may hold any key).
func breakpoints(t *testing.T, body []byte) int {
	t.Helper()
	type marked struct {
		CacheControl json.RawMessage `json:"cache_control"`
	}
	var req struct {
		System   []marked `json:"system"`
		Tools    []marked `json:"tools"`
		Messages []struct {
			Content []marked `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("not a Messages API request: %v: %s", err, body)
	}
	all := append(req.System, req.Tools...)
	for _, m := range req.Messages {
		all = append(all, m.Content...)
	}
	n := 0
	for _, b := range all {
		if b.CacheControl != nil {
			if string(b.CacheControl) != `{"type":"ephemeral"}` {
				t.Fatalf("cache_control %s", b.CacheControl)
			}
			n++
		}
	}
	return n
}
