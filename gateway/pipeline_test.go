package gateway_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/gateway"
)

// managedWithRegistry is managedGateway with its metrics at hand.
func managedWithRegistry(t *testing.T, sc *scripted) (*httptest.Server, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return scriptedGateway(t, sc, func(o *gateway.Options) { managed(t, o); o.Registry = reg }), reg
}

const reasoningReply = `{"id":"r9","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"The user wants a greeting; no tool is needed.","content":"Hello there."},"finish_reason":"stop"}],"usage":{"prompt_tokens":200,"completion_tokens":12,"total_tokens":212,"prompt_tokens_details":{"cached_tokens":180}}}`

// A managed turn keeps the model's reasoning whether the client streams or not (the
// streamed copy of the loop used to drop reasoning_content).
func TestPipeline_ManagedTurnKeepsReasoningStreamedAndWhole(t *testing.T) {
	sc := &scripted{replies: []string{reasoningReply, reasoningReply}}
	gw, _ := managedWithRegistry(t, sc)

	_, whole := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "w")
	var c struct {
		Choices []struct {
			Message struct {
				Reasoning string `json:"reasoning_content"`
				Content   string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(whole, &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("whole answer %s: %v", whole, err)
	}
	if c.Choices[0].Message.Reasoning != "The user wants a greeting; no tool is needed." {
		t.Errorf("whole answer lost the reasoning: %s", whole)
	}

	_, body := postWithThread(t, gw, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "s")
	var reasoning, content strings.Builder
	for _, ev := range sseEvents(body) {
		if ev == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Reasoning *string `json:"reasoning_content"`
					Content   *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &ch); err != nil {
			t.Fatalf("chunk %s: %v", ev, err)
		}
		for _, choice := range ch.Choices {
			if choice.Delta.Reasoning != nil {
				reasoning.WriteString(*choice.Delta.Reasoning)
			}
			if choice.Delta.Content != nil {
				content.WriteString(*choice.Delta.Content)
			}
		}
	}
	if reasoning.String() != "The user wants a greeting; no tool is needed." || content.String() != "Hello there." {
		t.Errorf("stream carried reasoning %q and content %q", reasoning.String(), content.String())
	}
}

// The cache source of a managed turn does not depend on the stream flag: the engine
// reported cached tokens both times, so both count as reported.
func TestPipeline_ManagedCacheSourceIsTheSameStreamedOrNot(t *testing.T) {
	sc := &scripted{replies: []string{reasoningReply, reasoningReply}}
	gw, reg := managedWithRegistry(t, sc)
	postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "w")
	postWithThread(t, gw, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "s")
	if got := metric(t, reg, "maskgate_cached_tokens_total", map[string]string{"source": "reported", "door": "chat_completions"}); got != 360 {
		t.Errorf("cached tokens reported = %v, want 2 × 180", got)
	}
	if got := metric(t, reg, "maskgate_cached_tokens_total", map[string]string{"source": "unknown"}); got != 0 {
		t.Errorf("cached tokens under source unknown = %v, want 0", got)
	}
}
