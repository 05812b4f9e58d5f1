package oai

import "encoding/json"

// ChatCompletion is a whole (non-streaming) response.
type ChatCompletion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"` // "chat.completion"
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []Choice `json:"choices"`
	Usage             *Usage   `json:"usage,omitempty"`
	SystemFingerprint string   `json:"system_fingerprint,omitempty"`
}

// Choice is one choice of a ChatCompletion.
type Choice struct {
	Index        int             `json:"index"`
	Message      ResponseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	Logprobs     *struct{}       `json:"logprobs"`
	// StopReason is vLLM's extension: the stop string (or token id) that ended the
	// answer; null or absent when none did. llama-server's backend writes it too.
	StopReason json.RawMessage `json:"stop_reason,omitempty"`
}

// ResponseMessage is the assistant message of a response. Content is null when the
// model only called tools, as OpenAI sends it.
type ResponseMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ReasoningContent is the model's reasoning as SGLang, llama-server and vLLM before
	// 0.11 return it apart from the answer; Reasoning is the same under the name vLLM
	// uses since (it dropped reasoning_content in 0.13). Thought reads either.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	Reasoning        *string `json:"reasoning,omitempty"`
}

// Thought is the message's reasoning under either name (reasoning when both are set: a
// vLLM in its transition sends both, the same text), nil when it has none.
func (m *ResponseMessage) Thought() *string { return thought(m.ReasoningContent, m.Reasoning) }

// Chunk is one streamed chat.completion.chunk.
type Chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"` // "chat.completion.chunk"
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint,omitempty"`
	Choices           []ChunkChoice `json:"choices"`
	Usage             *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is one choice of a Chunk. FinishReason is null until the last chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
	// StopReason is as Choice's, on the chunk that carries the finish reason.
	StopReason json.RawMessage `json:"stop_reason,omitempty"`
}

// Delta is the increment a chunk carries. Role appears in the first chunk only.
type Delta struct {
	Role             string     `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	Reasoning        *string    `json:"reasoning,omitempty"` // vLLM's name for it (see ResponseMessage)
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// Thought is the delta's reasoning under either name, as ResponseMessage.Thought.
func (d *Delta) Thought() *string { return thought(d.ReasoningContent, d.Reasoning) }

func thought(content, reasoning *string) *string {
	if reasoning != nil {
		return reasoning
	}
	return content
}

// Names of the assistant message's reasoning member.
const (
	ReasoningContent = "reasoning_content"
	Reasoning        = "reasoning"
)

// Usage is token accounting as OpenAI reports it.
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
	// CompletionTokensDetails, where the engine gives it (vLLM, OpenAI), says how many of
	// the completion's tokens were reasoning.
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// CompletionTokensDetails breaks the completion's tokens down.
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// PromptTokensDetails says how many prompt tokens came from the engine's cache.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Finish reasons.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)
