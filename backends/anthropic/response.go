package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolname"
)

// meta is what a response carries besides the answer.
type meta struct {
	created int64
	model   string // the request's, for an answer that names none
}

// finishReason maps Anthropic's stop_reason ("Handling stop reasons") onto OpenAI's
// finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return oai.FinishLength
	case "tool_use":
		return oai.FinishToolCalls
	case "refusal":
		return "content_filter"
	default: // end_turn, stop_sequence, pause_turn
		return oai.FinishStop
	}
}

// openAIUsage is OpenAI's usage for Anthropic's. Anthropic counts the prompt in three
// parts (input_tokens after the last breakpoint, cache_creation_input_tokens written to
// the cache, cache_read_input_tokens read from it); OpenAI's prompt_tokens is their sum,
// and cached_tokens the part read.
func openAIUsage(u usage) *oai.Usage {
	v := func(p *int) int {
		if p == nil || *p < 0 {
			return 0
		}
		return *p
	}
	read := v(u.CacheReadInputTokens)
	prompt := v(u.InputTokens) + v(u.CacheCreationInputTokens) + read
	out := v(u.OutputTokens)
	return &oai.Usage{PromptTokens: prompt, CompletionTokens: out, TotalTokens: prompt + out,
		PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: read}}
}

// completionID is the OpenAI id for Anthropic's message id, kept visible for tracing.
func completionID(msgID string) string { return "chatcmpl-" + msgID }

// invalidAnswer is the error for an answer this package cannot read.
func invalidAnswer(name, format string, args ...any) *backends.Error {
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
		Message: fmt.Sprintf("backend %q sent an answer that is not a Messages API message: ", name) + fmt.Sprintf(format, args...)}
}

// completion translates a whole Messages API answer into a chat.completion: text blocks
// joined into content, tool_use blocks into tool_calls (names mapped back, input bytes
// as the arguments), thinking and other blocks left out.
func completion(name string, body []byte, names *toolname.Map, m meta) ([]byte, error) {
	var msg message
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, invalidAnswer(name, "%v", err)
	}
	if msg.Type != "message" {
		return nil, invalidAnswer(name, "type %q", msg.Type)
	}
	var text []byte
	var calls []oai.ToolCall
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text...)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, invalidAnswer(name, "content[%d] is a tool_use without an id or a name", i)
			}
			args := b.Input
			if isNull(args) {
				args = json.RawMessage("{}")
			}
			calls = append(calls, oai.ToolCall{ID: b.ID, Type: "function",
				Function: oai.FunctionCall{Name: names.Real(b.Name), Arguments: string(args)}})
		}
	}
	stop := ""
	if msg.StopReason != nil {
		stop = *msg.StopReason
	}
	c := oai.ChatCompletion{
		ID: completionID(msg.ID), Object: "chat.completion", Created: m.created, Model: msg.Model,
		Choices: []oai.Choice{{
			Message:      oai.ResponseMessage{Role: "assistant", ToolCalls: calls},
			FinishReason: finishReason(stop),
		}},
		Usage: openAIUsage(msg.Usage),
	}
	if c.Model == "" {
		c.Model = m.model
	}
	if len(calls) == 0 || len(text) > 0 {
		s := string(text)
		c.Choices[0].Message.Content = &s
	}
	out, err := json.Marshal(c)
	if err != nil {
		return nil, invalidAnswer(name, "%v", err)
	}
	return out, nil
}
