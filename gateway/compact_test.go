package gateway_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway/responses"
)

// Codex's remote compaction: /v1/responses/compact runs the compaction prompt on the
// engine as one more turn of the conversation, and answers the user messages and a
// compaction item; the item, sent back in a later input, becomes the summary in front of
// the rest.
func TestDoors_ResponsesCompactRoundTrip(t *testing.T) {
	sc := &scripted{replies: []string{textReply("We fixed the parser; tests remain.", 40, 30), textReply("ok", 10, 0)}}
	gw := doorsWith(t, sc, nil)
	u1 := `{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the parser"}]}`
	a1 := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}`
	u2 := `{"role":"user","content":"now the tests"}`
	status, _, out := call(t, gw, "POST", "/v1/responses/compact", aliceKey,
		`{"model":"m1","instructions":"You are a coding agent.","input":[`+u1+`,`+a1+`,`+u2+`]}`)
	if status != 200 {
		t.Fatalf("compact: status %d: %s", status, out)
	}
	// The engine ran the conversation with the compaction prompt as its last user message.
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(sc.bodies[0]["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 || msgs[0].Role != "system" || msgs[4].Role != "user" || !strings.Contains(string(msgs[4].Content), "Summarize the conversation") {
		t.Fatalf("the engine's messages: %s", sc.bodies[0]["messages"])
	}
	var got struct {
		ID     string            `json:"id"`
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
		Usage  struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// The user messages as the specification's Message items: an id, status, and the
	// text as an input_text part.
	userItem := regexp.MustCompile(`^\{"id":"msg_[0-9a-f]{24}","type":"message","status":"completed","role":"user","content":\[\{"type":"input_text","text":"([^"]*)"\}\]\}$`)
	if got.Object != "response.compaction" || len(got.Output) != 3 || got.Usage.InputTokens != 40 ||
		userItem.FindStringSubmatch(string(got.Output[0])) == nil || userItem.FindStringSubmatch(string(got.Output[0]))[1] != "fix the parser" ||
		userItem.FindStringSubmatch(string(got.Output[1])) == nil || userItem.FindStringSubmatch(string(got.Output[1]))[1] != "now the tests" {
		t.Fatalf("compaction answer: %s", out)
	}
	var item struct {
		Type             string `json:"type"`
		EncryptedContent string `json:"encrypted_content"`
	}
	if err := json.Unmarshal(got.Output[2], &item); err != nil || item.Type != "compaction" || item.EncryptedContent == "" {
		t.Fatalf("no compaction item: %s", got.Output[2])
	}
	// Codex's next turn: the compacted history, then new input.
	next := `{"model":"m1","input":[` + string(got.Output[0]) + `,` + string(got.Output[1]) + `,` + string(got.Output[2]) + `,{"role":"user","content":"go on"}]}`
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, next); status != 200 {
		t.Fatalf("turn after compaction: status %d: %s", status, out)
	}
	if got, want := string(sc.bodies[1]["messages"]), `{"role":"user","content":"Summary of the conversation so far:\n\nWe fixed the parser; tests remain."}`; !strings.Contains(got, want) {
		t.Errorf("the summary is not in the engine's messages:\n%s\nwant %s", got, want)
	}
	// Foreign content (OpenAI's own ciphertext) is refused, naming the field.
	foreign := `{"model":"m1","input":[{"type":"compaction","encrypted_content":"gAAAAABoPENAI"},{"role":"user","content":"x"}]}`
	status, _, out = call(t, gw, "POST", "/v1/responses", aliceKey, foreign)
	if status != 400 || !strings.Contains(out, `"param":"input[0].encrypted_content"`) || !strings.Contains(out, "did not make") {
		t.Errorf("foreign compaction: %d %s", status, out)
	}
	if len(sc.bodies) != 2 {
		t.Errorf("%d engine calls, want 2", len(sc.bodies))
	}
}

// input_tokens counts what count_tokens counts for the same conversation.
func TestDoors_ResponsesInputTokens(t *testing.T) {
	gw := doorsWith(t, &scripted{}, nil)
	count := func(path, body string) int {
		t.Helper()
		status, _, out := call(t, gw, "POST", path, aliceKey, body)
		var got struct {
			Object      string `json:"object"`
			InputTokens int    `json:"input_tokens"`
		}
		if status != 200 || json.Unmarshal([]byte(out), &got) != nil || got.InputTokens <= 0 {
			t.Fatalf("%s: %d %s", path, status, out)
		}
		if path == "/v1/responses/input_tokens" && got.Object != "response.input_tokens" {
			t.Errorf("object %q", got.Object)
		}
		return got.InputTokens
	}
	short := count("/v1/responses/input_tokens", `{"model":"m1","instructions":"Be brief.","input":"hello there"}`)
	if want := count("/v1/messages/count_tokens", `{"model":"m1","system":"Be brief.","messages":[{"role":"user","content":"hello there"}]}`); short != want {
		t.Errorf("input_tokens %d, count_tokens of the same conversation %d", short, want)
	}
	long := count("/v1/responses/input_tokens", `{"model":"m1","instructions":"Be brief.","input":"hello there, `+strings.Repeat("and more words ", 50)+`"}`)
	if long < short+50 {
		t.Errorf("150 more words count %d tokens over %d", long-short, short)
	}
	if status, _, out := call(t, gw, "POST", "/v1/responses/input_tokens", aliceKey, `{"model":"m1","input":[{"type":"bogus"}]}`); status != 400 || !strings.Contains(out, `"param":"input[0].type"`) {
		t.Errorf("bad input: %d %s", status, out)
	}
}

func TestCompactionEncoding(t *testing.T) {
	for _, s := range []string{"", "summary", "naïve ünïcode\n\x00"} {
		if got, ok := responses.DecodeCompaction(responses.EncodeCompaction(s)); !ok || got != s {
			t.Errorf("%q came back as %q, %v", s, got, ok)
		}
	}
	enc := responses.EncodeCompaction("summary")
	for _, bad := range []string{"", "gAAAAAB", "mgc1.", "mgc1.c3VtbWFyeQ", enc[:len(enc)-1] + "0", strings.Replace(enc, "mgc1.", "mgc2.", 1), "mgc1.c3VtbWFyeA." + enc[len(enc)-16:]} {
		if _, ok := responses.DecodeCompaction(bad); ok {
			t.Errorf("%q decodes", bad)
		}
	}
}
