package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A current vLLM answers with reasoning (not reasoning_content) and counts its reasoning
// tokens: each door shows the reasoning, the Responses usage carries the count, and
// reasoning sent back in history reaches vLLM under the name it reads.
func TestReasoning_CurrentVLLMBothWays(t *testing.T) {
	t.Parallel()
	const answer = `{"id":"c1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"four","reasoning":"let me think"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":10,"completion_tokens":9,"total_tokens":19,"completion_tokens_details":{"reasoning_tokens":7}}}`
	up := newUpstream(t, replyJSON(http.StatusOK, answer))
	gw := gatewayFor(t, up) // kind vllm

	status, _, body := call(t, gw.Server, "POST", "/v1/responses", "", `{"model":"m1","input":"2+2?"}`)
	var resp struct {
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			OutputTokensDetails struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || status != http.StatusOK {
		t.Fatalf("responses: %d %s (%v)", status, body, err)
	}
	if len(resp.Output) != 2 || resp.Output[0].Type != "reasoning" || len(resp.Output[0].Content) != 1 || resp.Output[0].Content[0].Text != "let me think" {
		t.Errorf("responses output %s, want a reasoning item saying \"let me think\" then the message", body)
	}
	if got := resp.Usage.OutputTokensDetails.ReasoningTokens; got != 7 {
		t.Errorf("output_tokens_details.reasoning_tokens = %d, want 7", got)
	}

	status, _, body = call(t, gw.Server, "POST", "/v1/messages", "", `{"model":"m1","max_tokens":50,"messages":[{"role":"user","content":"2+2?"}]}`)
	if status != http.StatusOK || !strings.Contains(body, `{"type":"thinking","thinking":"let me think"`) {
		t.Errorf("messages: %d %s, want a thinking block", status, body)
	}

	// History back: a Responses reasoning item and a Messages thinking block.
	for _, c := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"m1","input":[{"role":"user","content":"2+2?"},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"let me think"}]},` +
			`{"role":"assistant","content":"four"},{"role":"user","content":"and 3+3?"}]}`},
		{"/v1/messages", `{"model":"m1","max_tokens":50,"messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":[{"type":"thinking","thinking":"let me think","signature":""},{"type":"text","text":"four"}]},{"role":"user","content":"and 3+3?"}]}`},
	} {
		if status, _, body := call(t, gw.Server, "POST", c.path, "", c.body); status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, status, body)
		}
		sent := string(up.lastBody())
		if !strings.Contains(sent, `"reasoning":"let me think"`) || strings.Contains(sent, `"reasoning_content"`) {
			t.Errorf("%s: vLLM got %s, want the reasoning under \"reasoning\"", c.path, sent)
		}
	}
}

// Streamed, vLLM's reasoning deltas are read too.
func TestReasoning_StreamedDeltasUnderEitherName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"reasoning", "reasoning_content"} {
		up := newUpstream(t, replySSE([]string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","` + name + `":"let me "}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"` + name + `":"think"}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"four"},"finish_reason":"stop"}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"completion_tokens_details":{"reasoning_tokens":4}}}`,
		}, true))
		gw := gatewayFor(t, up)
		status, _, body := call(t, gw.Server, "POST", "/v1/responses", "", `{"model":"m1","stream":true,"input":"2+2?"}`)
		if status != http.StatusOK || !strings.Contains(body, `"delta":"let me "`) || !strings.Contains(body, `"reasoning_tokens":4`) {
			t.Errorf("%s: %d %s", name, status, body)
		}
	}
}
