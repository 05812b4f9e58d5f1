//go:build llamacpp

package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// request is what the engine needs from a chat completion request.
type request struct {
	chat      oai.ChatRequest
	sampling  sampling
	maxTokens int // 0: until the context is full
	stops     []string
	tools     bool // parse Hermes tool calls from the answer
	// reasoning is each message's reasoning_content (or reasoning), "" where it has
	// none, and effort the request's reasoning_effort: what the template gets besides
	// chat (templateExtra).
	reasoning []string
	effort    string
}

// extensions are request fields beyond OpenAI's that llama-server and vLLM accept too.
type extensions struct {
	TopK     *int `json:"top_k"`
	Messages []struct {
		ReasoningContent *string `json:"reasoning_content"`
		Reasoning        *string `json:"reasoning"`
	} `json:"messages"`
	ReasoningEffort *string `json:"reasoning_effort"`
}

func parseRequest(body []byte) (*request, error) {
	body = withoutImages(body) // images.go: the engine reads none
	r := &request{}
	if err := json.Unmarshal(body, &r.chat); err != nil {
		return nil, badRequest("", fmt.Sprintf("the request body is not a chat completion request: %v", err))
	}
	var ext extensions
	_ = json.Unmarshal(body, &ext) // the body already parsed as an object
	c := &r.chat
	if len(c.Messages) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	r.reasoning = historyReasoning(&ext)
	if ext.ReasoningEffort != nil {
		r.effort = *ext.ReasoningEffort
	}
	if c.N != nil && *c.N != 1 {
		return nil, badRequest("n", "the embedded engine returns one choice; set n to 1")
	}

	r.sampling = sampling{temperature: 1, topP: 1, seed: rand.Uint64()}
	if c.Temperature != nil {
		if *c.Temperature < 0 {
			return nil, badRequest("temperature", "temperature must be 0 or more")
		}
		r.sampling.temperature = *c.Temperature
	}
	if c.TopP != nil {
		if *c.TopP <= 0 || *c.TopP > 1 {
			return nil, badRequest("top_p", "top_p must be in (0, 1]")
		}
		r.sampling.topP = *c.TopP
	}
	if ext.TopK != nil {
		if *ext.TopK < 0 {
			return nil, badRequest("top_k", "top_k must be 0 (off) or more")
		}
		r.sampling.topK = *ext.TopK
	}
	if c.Seed != nil {
		r.sampling.seed = uint64(*c.Seed)
	}
	switch {
	case c.MaxCompletionTokens != nil:
		r.maxTokens = *c.MaxCompletionTokens
	case c.MaxTokens != nil:
		r.maxTokens = *c.MaxTokens
	}
	if r.maxTokens < 0 {
		return nil, badRequest("max_tokens", "max_tokens must be positive")
	}
	stops, err := parseStop(c.Stop)
	if err != nil {
		return nil, badRequest("stop", err.Error())
	}
	r.stops = stops
	r.tools = len(c.Tools) > 0 && !bytes.Equal(bytes.TrimSpace(c.ToolChoice), []byte(`"none"`))
	if !r.tools {
		c.Tools = nil // tool_choice "none": the model is not told about them
	}
	return r, nil
}

// parseStop reads "stop": a string or an array of strings.
func parseStop(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("stop must be a string or an array of strings")
	}
	return many, nil
}

func badRequest(param, msg string) *backends.Error { return backends.BadRequest(param, "%s", msg) }
