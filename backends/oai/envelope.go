package oai

import (
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
	// Tools is the raw "tools" array, nil when absent or null.
	Tools json.RawMessage
	// ToolCount is the number of elements of Tools (0 when it is nil).
	ToolCount int
	// Object is the whole request, indexed, for byte-level edits.
	Object *Object
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
// It scans the body once and decodes only the few fields it returns, so its cost stays
// small next to the body's size; Messages, Tools and Object alias body.
func ParseEnvelope(body []byte) (*Envelope, error) { return ParseEnvelopeKnown(body, nil) }

// ParseEnvelopeKnown is ParseEnvelope with known vouching for the "tools" arrays it has
// seen validated before (nil: none): such an array is compared, not scanned.
func ParseEnvelopeKnown(body []byte, known Known) (*Envelope, error) {
	if len(body) == 0 {
		return nil, &RequestError{Message: "request body is empty; send a JSON chat completion request"}
	}
	obj, err := parseObject(body, known, "tools")
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, &RequestError{Message: "request body is not valid JSON: " + se.Error()}
		}
		return nil, &RequestError{Message: "request body must be a JSON object"}
	}
	env := &Envelope{Object: obj}

	raw, ok := obj.Get("model")
	if !ok || isNull(raw) {
		return nil, &RequestError{Message: "you must provide a model parameter", Param: "model"}
	}
	if err := json.Unmarshal(raw, &env.Model); err != nil {
		return nil, typeError("model", "a string", raw)
	}
	if env.Model == "" {
		return nil, &RequestError{Message: "you must provide a model parameter", Param: "model"}
	}

	if raw, ok := obj.Get("stream"); ok && !isNull(raw) {
		if env.Stream, ok = boolean(raw); !ok {
			return nil, typeError("stream", "a boolean", raw)
		}
	}
	if raw, ok := obj.Get("stream_options"); ok && !isNull(raw) {
		so, err := ParseObject(raw)
		if err != nil {
			return nil, typeError("stream_options", "an object", raw)
		}
		if iu, ok := so.Get("include_usage"); ok && !isNull(iu) {
			if env.IncludeUsage, ok = boolean(iu); !ok {
				return nil, typeError("stream_options.include_usage", "a boolean", iu)
			}
		}
	}

	raw, ok = obj.Get("messages")
	if !ok || isNull(raw) {
		return nil, &RequestError{Message: "missing required parameter: 'messages'", Param: "messages"}
	}
	if env.Messages, ok = arrayElements(raw); !ok {
		return nil, typeError("messages", "an array", raw)
	}
	if len(env.Messages) == 0 {
		return nil, &RequestError{Message: "'messages' must contain at least one message", Param: "messages"}
	}
	for i, m := range env.Messages {
		if err := checkMessage(i, m); err != nil {
			return nil, err
		}
	}

	if raw, ok := obj.Get("tools"); ok && !isNull(raw) {
		if raw[0] != '[' {
			return nil, typeError("tools", "an array", raw)
		}
		env.Tools = raw
		env.ToolCount, _ = obj.Len("tools")
	}
	return env, nil
}

func checkMessage(i int, m []byte) error {
	role, found, isObject := Member(m, "role")
	if !isObject {
		return &RequestError{Message: fmt.Sprintf("message %d must be an object with a role", i), Param: fmt.Sprintf("messages[%d]", i)}
	}
	if found && plainNonEmpty(role) {
		return nil
	}
	var s string
	if !found || json.Unmarshal(role, &s) != nil || s == "" {
		return &RequestError{Message: fmt.Sprintf("message %d needs a role (a non-empty string)", i), Param: fmt.Sprintf("messages[%d].role", i)}
	}
	return nil
}

// plainNonEmpty reports whether v is a JSON string of at least one byte with no escapes:
// a non-empty string without decoding it.
func plainNonEmpty(v []byte) bool {
	if len(v) < 3 || v[0] != '"' {
		return false
	}
	for _, b := range v[1 : len(v)-1] {
		if b == '\\' {
			return false
		}
	}
	return true
}

func typeError(param, want string, got []byte) *RequestError {
	return &RequestError{Message: fmt.Sprintf("invalid type for '%s': expected %s, got %s", param, want, Kind(got)), Param: param}
}

// Kind names a JSON value's type for error messages.
func Kind(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isNull(v []byte) bool { return string(v) == "null" }

func boolean(v []byte) (value, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// arrayElements splits a valid JSON array into its elements' bytes; ok is false when v
// is not an array.
func arrayElements(v []byte) ([]json.RawMessage, bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	s := scanner{b: v}
	out := []json.RawMessage{}
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		return out, true
	}
	for i < len(v) {
		start := skipSpace(v, i)
		end, err := s.value(start)
		if err != nil {
			return nil, false
		}
		out = append(out, v[start:end:end])
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ']' {
			return out, true
		}
		i++ // the comma; the body was validated whole before
	}
	return nil, false
}
