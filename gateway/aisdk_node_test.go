package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// aisdkDir holds the Vercel AI SDK (ai, @ai-sdk/openai), pinned, and chat.mjs.
const aisdkDir = "testdata/aisdk"

// aisdkTurn is what chat.mjs reports of one turn.
type aisdkTurn struct {
	Text         string            `json:"text"`
	FinishReason string            `json:"finishReason"`
	ID           string            `json:"id"`
	Store        *bool             `json:"store"`
	Input        []json.RawMessage `json:"input"`
}

// runAISDK runs chat.mjs for scenario against the gateway at baseURL (its root) as key.
func runAISDK(t *testing.T, node, baseURL, key, scenario string, env ...string) (int, []aisdkTurn, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "chat.mjs", scenario)
	cmd.Dir = aisdkDir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "NODE_NO_WARNINGS=1", "OPENAI_BASE_URL=" + baseURL + "/v1", "OPENAI_API_KEY=" + key}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("node chat.mjs %s: %v\n%s", scenario, err, stderr.Bytes())
	}
	var out struct {
		Turns []aisdkTurn `json:"turns"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node chat.mjs %s exited %d without a JSON summary: %v\nstdout: %s\nstderr: %s", scenario, code, err, stdout.Bytes(), stderr.Bytes())
	}
	return code, out.Turns, stdout.String()
}

// checkAISDKChat holds a two-turn chat of the AI SDK: both turns answered with the
// engine's text, the second turn's request carried the first answer as an
// item_reference to its message (the SDK's default, store: true), and the engine saw
// that answer in its place in the second turn's history.
func checkAISDKChat(t *testing.T, turns []aisdkTurn, answers []string, engineMessages json.RawMessage) {
	t.Helper()
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	for i, tn := range turns {
		if tn.Text != answers[i] || !strings.HasPrefix(tn.ID, "resp_") {
			t.Errorf("turn %d: text %q id %q, want %q", i+1, tn.Text, tn.ID, answers[i])
		}
	}
	var refs []string
	for _, it := range turns[1].Input {
		var v struct{ Type, ID string }
		_ = json.Unmarshal(it, &v)
		if v.Type == "item_reference" {
			refs = append(refs, v.ID)
		}
	}
	if turns[1].Store != nil && !*turns[1].Store || len(refs) != 1 || !strings.HasPrefix(refs[0], "msg_") {
		t.Fatalf("the second turn's input carries no item_reference to the first answer: store %v, input %s", turns[1].Store, turns[1].Input)
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	answer, _ := json.Marshal(answers[0])
	if err := json.Unmarshal(engineMessages, &msgs); err != nil || len(msgs) != 3 || msgs[1].Role != "assistant" || string(msgs[1].Content) != string(answer) ||
		msgs[2].Role != "user" {
		t.Errorf("the engine's second-turn messages: %s", engineMessages)
	}
}

// The Vercel AI SDK's default provider, openai(model), chats through the gateway's
// Responses door: two turns, whole and streamed, the second referencing the first
// answer by id (item_reference), which the gateway reads from the key's stored
// response.
func TestDoors_Node_AISDK(t *testing.T) {
	node := nodetest.Node(t, aisdkDir)
	for _, scenario := range []string{"generate", "stream"} {
		t.Run(scenario, func(t *testing.T) {
			answers := []string{"Hello there.", "Hello again."}
			sc := &scripted{replies: []string{textReply(answers[0], 10, 0), textReply(answers[1], 20, 10)}}
			gw := doorsWith(t, sc, nil)
			code, turns, raw := runAISDK(t, node, gw.URL, aliceKey, scenario)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, raw)
			}
			if len(sc.bodies) != 2 {
				t.Fatalf("the engine got %d requests", len(sc.bodies))
			}
			checkAISDKChat(t, turns, answers, sc.bodies[1]["messages"])
		})
	}
}
