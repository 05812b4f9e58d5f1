package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends"
)

// refuseUnsupported refuses the OpenAI fields whose meaning the Messages API cannot
// carry, so that a client never gets an answer to a question it did not ask.
func refuseUnsupported(r *chatRequest) error {
	switch {
	case r.N != nil && *r.N != 1:
		return backends.BadRequest("n", "the anthropic backend returns one choice; set n to 1 or leave it out")
	case r.Logprobs != nil && *r.Logprobs:
		return backends.BadRequest("logprobs", "Anthropic does not return log probabilities; leave logprobs out")
	case r.TopLogprobs != nil && *r.TopLogprobs != 0:
		return backends.BadRequest("top_logprobs", "Anthropic does not return log probabilities; leave top_logprobs out")
	case !isNull(r.LogitBias) && string(bytes.TrimSpace(r.LogitBias)) != "{}":
		return backends.BadRequest("logit_bias", "Anthropic has no logit bias; leave logit_bias out")
	case r.PresencePenalty != nil && *r.PresencePenalty != 0:
		return backends.BadRequest("presence_penalty", "Anthropic has no presence penalty; leave presence_penalty out or set it to 0")
	case r.FrequencyPenalty != nil && *r.FrequencyPenalty != 0:
		return backends.BadRequest("frequency_penalty", "Anthropic has no frequency penalty; leave frequency_penalty out or set it to 0")
	case !isNull(r.ReasoningEffort):
		return backends.BadRequest("reasoning_effort", "the anthropic backend does not map reasoning_effort to extended thinking; leave it out")
	case !isNull(r.Audio):
		return backends.BadRequest("audio", "the anthropic backend answers in text only; leave audio out")
	case !isNull(r.Prediction):
		return backends.BadRequest("prediction", "Anthropic has no predicted outputs; leave prediction out")
	case !isNull(r.WebSearchOptions):
		return backends.BadRequest("web_search_options", "the anthropic backend does not enable web search; leave web_search_options out")
	case !isNull(r.Functions), !isNull(r.FunctionCall):
		return backends.BadRequest("functions", "functions and function_call are deprecated; send tools and tool_choice")
	}
	if !isNull(r.Modalities) {
		var ms []string
		if err := json.Unmarshal(r.Modalities, &ms); err != nil {
			return backends.BadRequest("modalities", "modalities must be an array of strings")
		}
		for _, m := range ms {
			if m != "text" {
				return backends.BadRequest("modalities", "the anthropic backend answers in text only; modality %q is not supported", m)
			}
		}
	}
	if !isNull(r.ResponseFormat) {
		var rf struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil {
			return backends.BadRequest("response_format", "response_format must be an object with a type")
		}
		if rf.Type != "text" {
			return backends.BadRequest("response_format.type", "the anthropic backend cannot hold the answer to response_format %q; leave it out or use \"text\"", rf.Type)
		}
	}
	return nil
}

func positive(param string, n int) (int, error) {
	if n < 1 {
		return 0, backends.BadRequest(param, "%s must be at least 1", param)
	}
	return n, nil
}

// number checks that raw is a JSON number in [0, max] and returns its bytes unchanged;
// nil when absent.
func number(param string, raw json.RawMessage, max float64) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, backends.BadRequest(param, "%s must be a number", param)
	}
	if f < 0 || f > max {
		return nil, backends.BadRequest(param, "Anthropic accepts %s from 0 to %g; got %s", param, max, raw)
	}
	return bytes.TrimSpace(raw), nil
}

// stopSequences turns stop (a string or an array of strings) into the array
// stop_sequences takes, each string as the client wrote it; nil when absent.
func stopSequences(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		return append(append([]byte{'['}, raw...), ']'), nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, backends.BadRequest("stop", "stop must be a string or an array of strings")
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := []byte{'['}
	for i, s := range list {
		if len(s) == 0 || s[0] != '"' {
			return nil, backends.BadRequest(fmt.Sprintf("stop[%d]", i), "stop must be a string or an array of strings")
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, s...)
	}
	return append(out, ']'), nil
}

// userID returns the client's user as metadata.user_id, or nil when there is none.
func userID(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '"' {
		return nil, backends.BadRequest("user", "user must be a string")
	}
	if string(raw) == `""` {
		return nil, nil
	}
	return raw, nil
}
