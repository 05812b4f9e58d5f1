package anthropic

import "encoding/json"

// The OpenAI side, as this package reads it. Strings that travel on to Anthropic stay
// json.RawMessage so that they are copied as the client wrote them, escapes and all;
// oai.ChatRequest decodes them, which would re-encode them differently.

// chatRequest is an OpenAI chat completion request. Fields listed only to be refused
// are raw: any value but null (or the harmless default) changes what the answer means.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []inMessage     `json:"messages"`
	Stream              bool            `json:"stream"`
	Tools               []inTool        `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Temperature         json.RawMessage `json:"temperature"`
	TopP                json.RawMessage `json:"top_p"`
	TopK                json.RawMessage `json:"top_k"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	User                json.RawMessage `json:"user"`

	N                *int            `json:"n"`
	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      *int            `json:"top_logprobs"`
	ResponseFormat   json.RawMessage `json:"response_format"`
	LogitBias        json.RawMessage `json:"logit_bias"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	ReasoningEffort  json.RawMessage `json:"reasoning_effort"`
	Modalities       json.RawMessage `json:"modalities"`
	Audio            json.RawMessage `json:"audio"`
	Prediction       json.RawMessage `json:"prediction"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
}

// inMessage is one entry of "messages".
type inMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []inToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// inPart is one content part of a message whose content is an array.
type inPart struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// inToolCall is an assistant's earlier call. Arguments is OpenAI's JSON-in-a-string.
type inToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// inTool is one entry of "tools". DeferLoading is a member of the tool object beside
// function, as the gateway writes it under strategy index (backends.LoadDeferred).
type inTool struct {
	Type         string `json:"type"`
	DeferLoading bool   `json:"defer_loading"`
	Function     struct {
		Name        string          `json:"name"`
		Description json.RawMessage `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// The Anthropic side: what this package reads of its answers (Messages API reference,
// "Create a Message" response, and "Streaming Messages" events).

// message is a whole Messages API answer, and the "message" of message_start.
type message struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Role       string         `json:"role"`
	Model      string         `json:"model"`
	Content    []contentBlock `json:"content"`
	StopReason *string        `json:"stop_reason"`
	Usage      usage          `json:"usage"`
}

// contentBlock is one block of an answer. Input is a tool_use block's arguments, kept as
// Anthropic sent them.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// usage is Anthropic's token accounting. Pointers tell a message_delta that leaves a
// count out (keep the one from message_start) from one that sets it to zero.
type usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// merge takes the counts that d sets.
func (u *usage) merge(d usage) {
	for _, p := range []struct{ dst, src **int }{
		{&u.InputTokens, &d.InputTokens},
		{&u.OutputTokens, &d.OutputTokens},
		{&u.CacheCreationInputTokens, &d.CacheCreationInputTokens},
		{&u.CacheReadInputTokens, &d.CacheReadInputTokens},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
}

// streamEvent is the data of one streamed event; which members are set depends on Type.
type streamEvent struct {
	Type         string        `json:"type"`
	Message      *message      `json:"message"`
	Index        *int          `json:"index"`
	ContentBlock *contentBlock `json:"content_block"`
	Delta        *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage       `json:"usage"`
	Error *errorDetail `json:"error"`
}

// errorBody is Anthropic's error answer: {"type":"error","error":{"type","message"}}.
type errorBody struct {
	Type  string       `json:"type"`
	Error *errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
