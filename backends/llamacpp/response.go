package llamacpp

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// completionResult is what this package reads of a /completion answer, whole or one
// streamed event (tools/server/README.md, "POST /completion", Response format). In a
// stream every event carries content and stop; the last one, with stop true, carries the
// rest.
type completionResult struct {
	Content         string   `json:"content"`
	Stop            bool     `json:"stop"`
	StopType        string   `json:"stop_type"`     // none, eos, limit, word
	StoppingWord    string   `json:"stopping_word"` // the stop string that matched, with stop_type word
	Truncated       bool     `json:"truncated"`
	TokensPredicted int      `json:"tokens_predicted"`
	TokensEvaluated int      `json:"tokens_evaluated"`
	TokensCached    int      `json:"tokens_cached"`
	Timings         *timings `json:"timings"`
}

// timings are llama-server's "timings" (server_slot_stats): prompt_n prompt tokens
// evaluated by this request in prompt_ms, cache_n prompt tokens reused from the slot's
// KV cache, predicted_n tokens generated, the first from the prompt's last batch and the
// other predicted_n−1 in predicted_ms.
type timings struct {
	CacheN      int     `json:"cache_n"`
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

// engineTimings is r's timings for the gateway, or nil when llama-server sent none.
func engineTimings(r *completionResult) *backends.Timings {
	t := r.Timings
	if t == nil || t.PromptMS < 0 || t.PredictedMS < 0 {
		return nil
	}
	return &backends.Timings{Cached: t.CacheN, Computed: t.PromptN, PrefillSeconds: t.PromptMS / 1e3,
		DecodeSteps: max(t.PredictedN-1, 0), DecodeSeconds: t.PredictedMS / 1e3}
}

// usage is the OpenAI usage of a finished completion. The prompt is every prompt token,
// evaluated or reused: timings.prompt_n counts only those evaluated, so the cached ones
// are added back, which is what tokens_evaluated ("tokens evaluated in total from the
// prompt") reports too; it is the fallback when timings are missing.
func usage(r *completionResult) *oai.Usage {
	u := &oai.Usage{PromptTokens: r.TokensEvaluated, CompletionTokens: r.TokensPredicted}
	cached := r.TokensCached
	if t := r.Timings; t != nil {
		u.PromptTokens = t.PromptN + t.CacheN
		u.CompletionTokens = t.PredictedN
		cached = t.CacheN
	}
	cached = min(cached, u.PromptTokens)
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.PromptTokensDetails = &oai.PromptTokensDetails{CachedTokens: cached}
	return u
}

// cut says n_predict or the context cut the generation.
func cut(r *completionResult) bool { return r.StopType == "limit" || r.Truncated }

// finishReason maps stop_type: a generation cut by n_predict or by the context is
// "length", whatever it holds (a call it cut short is still a call, with the arguments
// so far, as OpenAI returns it); one that made calls is "tool_calls"; else "stop".
func finishReason(r *completionResult, calls int) string {
	switch {
	case cut(r):
		return oai.FinishLength
	case calls > 0:
		return oai.FinishToolCalls
	default:
		return oai.FinishStop
	}
}

// stopReason is the stop sequence that ended r, as vLLM's stop_reason (a JSON string),
// or nil when none did (the end of turn, the token limit, a call).
func stopReason(r *completionResult, calls int) json.RawMessage {
	if r.StopType != "word" || r.StoppingWord == "" || calls > 0 {
		return nil
	}
	b, _ := json.Marshal(r.StoppingWord)
	return b
}

// wholeCompletion is the chat.completion for a whole /completion answer: a leading
// <think> block read apart as reasoning_content (chatlayer), then calls parsed from the
// rest, where harmony's analysis channel is reasoning too.
func wholeCompletion(r *completionResult, p *params, m meta) *oai.ChatCompletion {
	msg := oai.ResponseMessage{Role: "assistant"}
	reasoning, text := "", r.Content
	if thinks(m.format) {
		reasoning, text = chatlayer.Split(r.Content, p.inside)
	}
	if !parses(p, m.format) {
		msg.Content = &text
	} else {
		parsed, err := toolcall.Parse(m.format, text, toolcall.Options{ResponseID: m.id, Cut: cut(r)})
		if err != nil { // New checked the format
			panic(err)
		}
		reasoning += parsed.Reasoning
		msg.ToolCalls = parsed.ToolCalls
		if parsed.Content != "" || len(parsed.ToolCalls) == 0 {
			msg.Content = &parsed.Content
		}
	}
	if reasoning != "" {
		msg.ReasoningContent = &reasoning
	}
	return &oai.ChatCompletion{
		ID:      m.id,
		Object:  "chat.completion",
		Created: m.created,
		Model:   m.model,
		Choices: []oai.Choice{{Message: msg, FinishReason: finishReason(r, len(msg.ToolCalls)), StopReason: stopReason(r, len(msg.ToolCalls))}},
		Usage:   usage(r),
	}
}

// parses says the text goes through the tool-call parser: the request may call tools,
// or the format is harmony, whose channels (analysis: reasoning; final: the answer) only
// the parser reads apart. A harmony model that addresses a function unasked still
// makes a call, which the gateway checks against the tools the request allows.
func parses(p *params, format string) bool { return p.calls || format == toolcall.Harmony }

// thinks says a format's models write their reasoning as a <think> block; harmony's
// models write it in the analysis channel, which its tool-call reader separates.
func thinks(format string) bool { return format != toolcall.Harmony }
