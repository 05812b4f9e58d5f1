package oai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Envelope is what the gateway reads of every chat request before routing it.
type Envelope struct {
	Model        string
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	// Messages are the raw entries of "messages", in order.
	Messages []json.RawMessage
	// Tools is the raw "tools" array, nil when absent.
	Tools json.RawMessage
}

// RequestError is a request the client must fix: a 400 with Param naming the field
// when it is known.
type RequestError struct {
	Message string
	Param   string
}

func (e *RequestError) Error() string {
	if e.Param != "" {
		return e.Param + ": " + e.Message
	}
	return e.Message
}

// ParseEnvelope checks that body is a chat completion request and reads its envelope.
// It does not copy body: Messages and Tools alias it.
func ParseEnvelope(body []byte) (*Envelope, error) {
	var raw struct {
		Model         *string           `json:"model"`
		Messages      []json.RawMessage `json:"messages"`
		Stream        *bool             `json:"stream"`
		StreamOptions *struct {
			IncludeUsage *bool `json:"include_usage"`
		} `json:"stream_options"`
		Tools json.RawMessage `json:"tools"`
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &RequestError{Message: "request body is empty; send a JSON chat completion request"}
	}
	if trimmed[0] != '{' {
		return nil, &RequestError{Message: "request body must be a JSON object"}
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, jsonError(err)
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, &RequestError{Message: "you must provide a model parameter", Param: "model"}
	}
	if raw.Messages == nil {
		return nil, &RequestError{Message: "missing required parameter: 'messages'", Param: "messages"}
	}
	if len(raw.Messages) == 0 {
		return nil, &RequestError{Message: "'messages' must contain at least one message", Param: "messages"}
	}
	for i, m := range raw.Messages {
		var msg struct {
			Role *string `json:"role"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, &RequestError{Message: fmt.Sprintf("message %d must be an object with a role", i), Param: fmt.Sprintf("messages[%d]", i)}
		}
		if msg.Role == nil || *msg.Role == "" {
			return nil, &RequestError{Message: fmt.Sprintf("message %d has no role", i), Param: fmt.Sprintf("messages[%d].role", i)}
		}
	}
	if len(raw.Tools) > 0 && raw.Tools[0] != '[' && string(raw.Tools) != "null" {
		return nil, &RequestError{Message: "'tools' must be an array", Param: "tools"}
	}
	env := &Envelope{Model: *raw.Model, Messages: raw.Messages}
	if string(raw.Tools) != "null" {
		env.Tools = raw.Tools
	}
	if raw.Stream != nil {
		env.Stream = *raw.Stream
	}
	if raw.StreamOptions != nil && raw.StreamOptions.IncludeUsage != nil {
		env.IncludeUsage = *raw.StreamOptions.IncludeUsage
	}
	return env, nil
}

// jsonError turns an encoding/json error into a RequestError naming the field.
func jsonError(err error) *RequestError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &RequestError{
			Message: fmt.Sprintf("invalid type for '%s': expected %s, got %s", te.Field, te.Type.String(), te.Value),
			Param:   te.Field,
		}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &RequestError{Message: fmt.Sprintf("request body is not valid JSON: %v (at byte %d)", se, se.Offset)}
	}
	return &RequestError{Message: "request body is not valid JSON: " + err.Error()}
}
