package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// The Responses API's answer as this package reads it (API reference, Responses: the
// response object; "Streaming events").

type rsResponse struct {
	ID                string   `json:"id"`
	CreatedAt         int64    `json:"created_at"`
	Model             string   `json:"model"`
	Status            string   `json:"status"`
	Output            []rsItem `json:"output"`
	Usage             *rsUsage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *rsError `json:"error"`
}

type rsError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// rsItem is one output item. Arguments is a function_call's JSON string, or a
// tool_search_call's object.
type rsItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type rsUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// chat is OpenAI's usage in Chat Completions terms; cached_tokens is always there.
func (u *rsUsage) chat() *oai.Usage {
	if u == nil {
		return &oai.Usage{PromptTokensDetails: &oai.PromptTokensDetails{}}
	}
	out := &oai.Usage{PromptTokens: max(u.InputTokens, 0), CompletionTokens: max(u.OutputTokens, 0), PromptTokensDetails: &oai.PromptTokensDetails{}}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	if u.InputTokensDetails != nil {
		out.PromptTokensDetails.CachedTokens = max(u.InputTokensDetails.CachedTokens, 0)
	}
	if u.OutputTokensDetails != nil {
		out.CompletionTokensDetails = &oai.CompletionTokensDetails{ReasoningTokens: max(u.OutputTokensDetails.ReasoningTokens, 0)}
	}
	return out
}

// finish is the Chat finish reason of a response that ended with status and reason.
func finish(status, reason string, calls bool) string {
	switch {
	case status == "incomplete" && reason == "max_output_tokens":
		return oai.FinishLength
	case status == "incomplete" && reason == "content_filter":
		return "content_filter"
	case calls:
		return oai.FinishToolCalls
	}
	return oai.FinishStop
}

// call is an output item as a Chat tool call, ok false for items that are not calls:
// a function_call with its name mapped back and its arguments string, a tool_search_call
// as a call of the loader whose arguments are the item's object.
func (it *rsItem) call(names *Names, loader string) (oai.ToolCall, bool) {
	var name string
	switch it.Type {
	case "function_call":
		name = names.Real(it.Name)
	case "tool_search_call":
		name = loader
	default:
		return oai.ToolCall{}, false
	}
	args := string(bytes.TrimSpace(it.Arguments))
	if strings.HasPrefix(args, `"`) {
		json.Unmarshal(it.Arguments, &args)
	} else if args == "" || args == "null" {
		args = "{}"
	}
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	return oai.ToolCall{ID: id, Type: "function", Function: oai.FunctionCall{Name: name, Arguments: args}}, true
}

func invalidAnswer(name, format string, args ...any) *backends.Error {
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
		Message: fmt.Sprintf("backend %q sent an answer that is not a Responses API response: ", name) + fmt.Sprintf(format, args...)}
}

func failed(name string, e *rsError) *backends.Error {
	msg := "the response failed"
	if e != nil && e.Message != "" {
		msg = e.Message
	}
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error",
		Message: fmt.Sprintf("backend %q failed: %s", name, clip(msg))}
}

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const limit = 512
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// completion translates a whole Responses answer into a chat.completion: the text of
// its message items joined into content (null when there is none), its calls into
// tool_calls, reasoning and other items left out.
func completion(name string, body []byte, names *Names, loader string) ([]byte, error) {
	var r rsResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, invalidAnswer(name, "%v", err)
	}
	if r.Status == "failed" || (r.Error != nil && r.Error.Message != "") {
		return nil, failed(name, r.Error)
	}
	msg := oai.ResponseMessage{Role: "assistant"}
	var text strings.Builder
	hasText := false
	for i := range r.Output {
		it := &r.Output[i]
		if c, ok := it.call(names, loader); ok {
			msg.ToolCalls = append(msg.ToolCalls, c)
			continue
		}
		if it.Type != "message" {
			continue
		}
		for _, p := range it.Content {
			switch p.Type {
			case "output_text":
				text.WriteString(p.Text)
				hasText = true
			case "refusal":
				text.WriteString(p.Refusal)
				hasText = true
			}
		}
	}
	if hasText {
		s := text.String()
		msg.Content = &s
	}
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	out := oai.ChatCompletion{ID: r.ID, Object: "chat.completion", Created: r.CreatedAt, Model: r.Model,
		Choices: []oai.Choice{{Message: msg, FinishReason: finish(r.Status, reason, len(msg.ToolCalls) > 0)}},
		Usage:   r.Usage.chat()}
	return json.Marshal(out)
}
