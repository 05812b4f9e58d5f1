package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// toolMode is what a request lets the model do with tools.
type toolMode int

const (
	toolsOff      toolMode = iota // no tools sent
	toolsAuto                     // the model may call a tool or answer
	toolsRequired                 // the model must call one tool, held to the names by format
)

// Strategies this backend reports in backends.Response.Strategy.
const (
	strategyMask   = "mask"
	strategyRemove = "remove"
)

// translated is an OpenAI request in Ollama's terms, with what reading the answer needs.
type translated struct {
	req  *api.ChatRequest
	mode toolMode
	// strategy is Response.Strategy: empty when the request has no tools.
	strategy string
}

// translateRequest turns an OpenAI chat completion body into an Ollama chat request for
// model (the body's model when empty). Errors are 400s naming the field.
func translateRequest(body []byte, model string) (*translated, error) {
	var r oai.ChatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, backends.BodyError(err)
	}
	if model == "" {
		model = r.Model
	}
	if model == "" {
		return nil, backends.BadRequest("model", "you must provide a model parameter")
	}
	if r.N != nil && *r.N != 1 {
		return nil, backends.BadRequest("n", "the ollama backend returns one choice; set n to 1 or leave it out")
	}
	msgs, err := convertMessages(r.Messages)
	if err != nil {
		return nil, err
	}
	stream := r.Stream
	// Truncate false: a history past the context window is refused (an overflow the
	// client's agent can compact on) instead of cut silently from the front.
	truncate := false
	t := &translated{req: &api.ChatRequest{Model: model, Messages: msgs, Stream: &stream, Truncate: &truncate}}

	choice, err := parseToolChoice(r.ToolChoice, r.Tools)
	if err != nil {
		return nil, err
	}
	t.mode = choice.mode
	// An auto choice among allowed tools can only be honoured by sending just those.
	var send map[string]bool
	if choice.mode == toolsAuto && choice.names != nil {
		send = make(map[string]bool, len(choice.names))
		for _, n := range choice.names {
			send[n] = true
		}
	}
	if choice.mode != toolsOff {
		if t.req.Tools, err = convertTools(r.Tools, send); err != nil {
			return nil, err
		}
	}
	if len(r.Tools) > 0 {
		t.strategy = strategyRemove
	}
	if choice.mode == toolsRequired {
		t.strategy = strategyMask
		if t.req.Format, err = callFormat(choice.names, r.Tools); err != nil {
			return nil, err
		}
	} else if t.req.Format, err = responseFormat(r.ResponseFormat); err != nil {
		return nil, err
	}
	if t.req.Options, err = options(&r); err != nil {
		return nil, err
	}
	return t, nil
}

// convertMessages translates messages in order. A tool result gets the name of the call
// it answers, found by id among the assistant's earlier calls, since Ollama's templates
// render tool results by name.
func convertMessages(in []oai.Message) ([]api.Message, error) {
	if len(in) == 0 {
		return nil, backends.BadRequest("messages", "'messages' must contain at least one message")
	}
	out := make([]api.Message, 0, len(in))
	callNames := map[string]string{}
	for i := range in {
		m := &in[i]
		text, err := messageText(m, i)
		if err != nil {
			return nil, err
		}
		switch m.Role {
		case "system", "developer":
			out = append(out, api.Message{Role: "system", Content: text})
		case "user":
			out = append(out, api.Message{Role: "user", Content: text})
		case "assistant":
			msg := api.Message{Role: "assistant", Content: text}
			for j, tc := range m.ToolCalls {
				call, err := convertToolCall(tc, i, j)
				if err != nil {
					return nil, err
				}
				if tc.ID != "" {
					callNames[tc.ID] = tc.Function.Name
				}
				msg.ToolCalls = append(msg.ToolCalls, call)
			}
			out = append(out, msg)
		case "tool", "function":
			name := callNames[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			out = append(out, api.Message{Role: "tool", Content: text, ToolName: name, ToolCallID: m.ToolCallID})
		case "":
			return nil, backends.BadRequest(fmt.Sprintf("messages[%d].role", i), "message %d has no role", i)
		default:
			return nil, backends.BadRequest(fmt.Sprintf("messages[%d].role", i),
				"role %q is not supported; use system, developer, user, assistant or tool", m.Role)
		}
	}
	return out, nil
}

// messageText returns a message's text, refusing content parts that are not text rather
// than dropping them.
func messageText(m *oai.Message, i int) (string, error) {
	c := bytes.TrimSpace(m.Content)
	param := fmt.Sprintf("messages[%d].content", i)
	switch {
	case len(c) == 0, string(c) == "null", c[0] == '"':
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return "", backends.BadRequest(param, "content must be a string or an array of content parts: %v", err)
		}
		for j, p := range parts {
			if p.Type != "text" {
				return "", backends.BadRequest(fmt.Sprintf("%s[%d].type", param, j),
					"content part type %q is not supported by the ollama backend; send text parts only", p.Type)
			}
		}
	default:
		return "", backends.BadRequest(param, "content must be a string or an array of content parts")
	}
	s, err := m.TextContent()
	if err != nil {
		return "", backends.BadRequest(param, "content must be a string or an array of text parts: %v", err)
	}
	return s, nil
}

func convertToolCall(tc oai.ToolCall, i, j int) (api.ToolCall, error) {
	param := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
	if tc.Type != "" && tc.Type != "function" {
		return api.ToolCall{}, backends.BadRequest(param+".type", "tool call type %q is not supported; only function", tc.Type)
	}
	if tc.Function.Name == "" {
		return api.ToolCall{}, backends.BadRequest(param+".function.name", "tool call has no function name")
	}
	args, err := parseArguments(tc.Function.Arguments)
	if err != nil {
		return api.ToolCall{}, backends.BadRequest(param+".function.arguments", "arguments must be a JSON object: %v", err)
	}
	return api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: j, Name: tc.Function.Name, Arguments: args}}, nil
}

// parseArguments reads an OpenAI arguments string; an empty one is an empty object.
func parseArguments(s string) (api.ToolCallFunctionArguments, error) {
	args := api.NewToolCallFunctionArguments()
	s = strings.TrimSpace(s)
	if s == "" {
		return args, nil
	}
	if s[0] != '{' {
		return args, errors.New("not an object")
	}
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		return args, err
	}
	return args, nil
}

// convertTools translates the tools for which send is true (all when send is nil).
func convertTools(tools []oai.Tool, send map[string]bool) (api.Tools, error) {
	var out api.Tools
	for i, t := range tools {
		if send != nil && !send[t.Function.Name] {
			continue
		}
		if t.Type != "function" {
			return nil, backends.BadRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported by the ollama backend; only function", t.Type)
		}
		if t.Function.Name == "" {
			return nil, backends.BadRequest(fmt.Sprintf("tools[%d].function.name", i), "tool has no function name")
		}
		var p api.ToolFunctionParameters
		if raw := bytes.TrimSpace(t.Function.Parameters); len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, backends.BadRequest(fmt.Sprintf("tools[%d].function.parameters", i),
					"parameters must be a JSON schema object Ollama can read: %v", err)
			}
		}
		if p.Type == "" {
			p.Type = "object"
		}
		if p.Properties == nil {
			p.Properties = api.NewToolPropertiesMap()
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: p,
		}})
	}
	return out, nil
}

// options maps OpenAI sampling fields onto Ollama's options.
func options(r *oai.ChatRequest) (map[string]any, error) {
	o := map[string]any{}
	if r.Temperature != nil {
		o["temperature"] = *r.Temperature
	}
	if r.TopP != nil {
		o["top_p"] = *r.TopP
	}
	if r.TopK != nil {
		o["top_k"] = *r.TopK
	}
	if r.Seed != nil {
		o["seed"] = *r.Seed
	}
	if r.PresencePenalty != nil {
		o["presence_penalty"] = *r.PresencePenalty
	}
	if r.FrequencyPenalty != nil {
		o["frequency_penalty"] = *r.FrequencyPenalty
	}
	switch {
	case r.MaxCompletionTokens != nil:
		o["num_predict"] = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		o["num_predict"] = *r.MaxTokens
	}
	stop, err := stopList(r.Stop)
	if err != nil {
		return nil, err
	}
	if len(stop) > 0 {
		o["stop"] = stop
	}
	if len(o) == 0 {
		return nil, nil
	}
	return o, nil
}

func stopList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, backends.BadRequest("stop", "stop must be a string or an array of strings")
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, backends.BadRequest("stop", "stop must be a string or an array of strings")
	}
	return list, nil
}

// responseFormat maps response_format onto Ollama's format.
func responseFormat(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &rf); err != nil {
		return nil, backends.BadRequest("response_format", "response_format must be an object with a type: %v", err)
	}
	switch rf.Type {
	case "text":
		return nil, nil
	case "json_object":
		return json.RawMessage(`"json"`), nil
	case "json_schema":
		if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 {
			return nil, backends.BadRequest("response_format.json_schema.schema", "json_schema needs a schema")
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, rf.JSONSchema.Schema); err != nil || buf.Bytes()[0] != '{' {
			return nil, backends.BadRequest("response_format.json_schema.schema", "schema must be a JSON object")
		}
		return buf.Bytes(), nil
	default:
		return nil, backends.BadRequest("response_format.type", "response_format type %q is not supported; use text, json_object or json_schema", rf.Type)
	}
}
