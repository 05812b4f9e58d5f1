package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// The Vercel AI SDK's default provider, openai(model) (the Responses API, store: true),
// chats two turns with generateText through the gateway over the real llama-server and
// the tiny model (the agents' rig: its end-of-turn raised so that a turn ends). The
// second turn sends the first answer back as an item_reference, which the gateway reads
// from the stored response: the engine's second prompt holds that answer.
func TestAISDK_TwoTurnsOverLlamaServer(t *testing.T) {
	const dir = "../../gateway/testdata/aisdk"
	node := nodetest.Node(t, dir)
	rig := newAgentRig(t, "")
	from := rig.wire.len()

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "chat.mjs", "generate")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NODE_NO_WARNINGS=1", "OPENAI_BASE_URL=" + rig.base + "/v1", "OPENAI_API_KEY=x",
		"MODEL=tiny", "MAX_TOKENS=24"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	var out struct {
		Turns []struct {
			Text  string            `json:"text"`
			ID    string            `json:"id"`
			Input []json.RawMessage `json:"input"`
		} `json:"turns"`
		Error any `json:"error"`
	}
	if json.Unmarshal(stdout.Bytes(), &out) != nil || err != nil || len(out.Turns) != 2 {
		t.Fatalf("chat.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	var refs int
	for _, it := range out.Turns[1].Input {
		if bytes.Contains(it, []byte(`"item_reference"`)) {
			refs++
		}
	}
	if refs != 1 || !strings.HasPrefix(out.Turns[0].ID, "resp_") || !strings.HasPrefix(out.Turns[1].ID, "resp_") {
		t.Fatalf("turns %+v: want two responses, the second's input with one item_reference", out.Turns)
	}
	var posts int
	for _, c := range rig.front.all() {
		if c.Method == http.MethodPost && c.Path == "/v1/responses" {
			posts++
			if c.Status != http.StatusOK {
				t.Errorf("POST /v1/responses answered %d: %s", c.Status, c.Req)
			}
		}
	}
	if posts != 2 {
		t.Errorf("%d POST /v1/responses, want 2", posts)
	}
	// The engine's second prompt holds the first answer where the reference was.
	prompts := rig.wire.since(from, "/apply-template")
	if len(prompts) != 2 {
		t.Fatalf("%d prompts rendered, want 2", len(prompts))
	}
	var second struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(prompts[1].req, &second); err != nil {
		t.Fatalf("the second prompt's request %s: %v", prompts[1].req, err)
	}
	found := false
	for _, m := range second.Messages {
		var text string
		if m.Role == "assistant" && json.Unmarshal(m.Content, &text) == nil && text == out.Turns[0].Text {
			found = true
		}
	}
	if !found {
		t.Errorf("the second prompt lacks the first answer %q as an assistant message:\n%s", out.Turns[0].Text, prompts[1].req)
	}
}
