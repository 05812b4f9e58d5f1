package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestLlamaServerE2E_CompactionRoundTrip is a Responses compaction on a real llama-server
// (the tiny model, unbiased, so the summary is max_output_tokens of text): POST
// /v1/responses/compact answers a response.compaction whose output is the input's user
// messages and one compaction item; that output sent back as a later request's input
// reaches the engine as the summary the engine itself wrote, with the user messages, and
// without the assistant's old turn.
func TestLlamaServerE2E_CompactionRoundTrip(t *testing.T) {
	ls := enginetest.Llama(t)
	proxy, wire := recordingProxy(t, ls.URL)
	base, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1), nil)

	const oldTurn = "OLD-ASSISTANT-TURN-7f3a: noted the word."
	from := wire.len()
	resp, raw := postJSON(t, base+"/v1/responses/compact", `{"model":"`+ls.Model+`","max_output_tokens":24,"input":[
		{"type":"message","role":"user","content":"Remember the word PELICAN."},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"`+oldTurn+`"}]},
		{"type":"message","role":"user","content":"And the colour TEAL."}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("compact: %d %s\n%s", resp.StatusCode, raw, logs.String())
	}
	var compact struct {
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(raw, &compact); err != nil || compact.Object != "response.compaction" || len(compact.Output) != 3 {
		t.Fatalf("compact answered %s (%v); want a response.compaction of two user messages and one compaction item", raw, err)
	}
	var head struct {
		Type             string `json:"type"`
		Role             string `json:"role"`
		EncryptedContent string `json:"encrypted_content"`
	}
	for i, it := range compact.Output[:2] {
		if json.Unmarshal(it, &head) != nil || head.Role != "user" {
			t.Errorf("output[%d] %s: want the input's user message", i, it)
		}
	}
	if json.Unmarshal(compact.Output[2], &head) != nil || head.Type != "compaction" || !strings.HasPrefix(head.EncryptedContent, "mgc1.") {
		t.Fatalf("output[2] %s: want a compaction item in the gateway's mgc1. format", compact.Output[2])
	}

	// The summary as the engine wrote it: the compaction run's one completion.
	runs := wire.await(t, from, "/completion", 1) // the compaction run's one completion
	var done struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(runs[0].resp, &done); err != nil || strings.TrimSpace(done.Content) == "" {
		t.Fatalf("the compaction run's completion %.300s (%v): no text", runs[0].resp, err)
	}
	summary := strings.TrimSpace(done.Content)

	// The compacted history back as input, with a new question.
	input := "[" + string(compact.Output[0]) + "," + string(compact.Output[1]) + "," + string(compact.Output[2]) +
		`,{"type":"message","role":"user","content":"What was the word?"}]`
	from = wire.len()
	resp, raw = postJSON(t, base+"/v1/responses", `{"model":"`+ls.Model+`","max_output_tokens":4,"input":`+input+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("the request with the compaction item: %d %s", resp.StatusCode, raw)
	}
	applied := wire.since(from, "/apply-template")
	if len(applied) != 1 {
		t.Fatalf("%d /apply-template calls, want 1", len(applied))
	}
	prompt := appliedPrompt(t, applied[0])
	for _, want := range []string{summary, "Remember the word PELICAN.", "And the colour TEAL.", "What was the word?"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the engine's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, oldTurn) {
		t.Errorf("the engine's prompt still holds the compacted assistant turn:\n%s", prompt)
	}
	t.Logf("compaction: a %d-byte summary replaced the assistant's turn; the next prompt is %d bytes", len(summary), len(prompt))
}
