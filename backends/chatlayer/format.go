package chatlayer

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// Format reads a Chat Completions body's response_format into the answer the output
// must be, as llama-server's chat layer did (it turned the schema into a grammar): nil
// for none, null or {"type":"text"}; {"type":"json_object"} any JSON object;
// {"type":"json_schema","json_schema":{"schema":…}} that schema (absent: any JSON
// value). The schema is rendered strictly (masking.NewAnswer): whether or not the client
// asked for strict, the grammar is the answer's only check, so a keyword it cannot
// express is a 400 invalid_request_error with param response_format naming the keyword,
// never an answer held to less than the schema. The prompt never sees response_format:
// the backend sends the answer's grammar with the generation only.
func Format(body []byte) (*masking.Answer, error) {
	raw, ok := oai.Get(body, "response_format")
	if !ok || formatNull(raw) {
		return nil, nil
	}
	var rf struct {
		Type       *string         `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	}
	if formatKind(raw) != '{' || json.Unmarshal(raw, &rf) != nil || rf.Type == nil {
		return nil, backends.BadRequest("response_format", "response_format must be an object with a string type: text, json_object or json_schema")
	}
	var schema []byte
	switch *rf.Type {
	case "text":
		return nil, nil
	case "json_object":
		schema = []byte(masking.AnyObject)
	case "json_schema":
		if formatKind(rf.JSONSchema) != '{' {
			return nil, backends.BadRequest("response_format", "response_format json_schema needs a json_schema object ({\"name\": …, \"schema\": {…}})")
		}
		s, ok := oai.Get(rf.JSONSchema, "schema")
		switch {
		case !ok || formatNull(s):
			schema = []byte("true")
		case formatKind(s) != '{' && formatKind(s) != 't' && formatKind(s) != 'f':
			return nil, backends.BadRequest("response_format", "response_format json_schema.schema must be a JSON Schema object")
		default:
			schema = s
		}
	default:
		return nil, backends.BadRequest("response_format", "response_format type %q is not supported; use text, json_object or json_schema", *rf.Type)
	}
	a, err := masking.NewAnswer(schema)
	var se *masking.SchemaError
	if errors.As(err, &se) {
		return nil, backends.BadRequest("response_format", "response_format json_schema: %s; this engine holds the answer to the schema with a grammar, so the schema must leave the keyword out", se)
	}
	if err != nil {
		return nil, backends.BadRequest("response_format", "response_format: %v", err)
	}
	return a, nil
}

func formatNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// formatKind is the first byte of a JSON value, or 0.
func formatKind(b []byte) byte {
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return 0
	}
	return b[0]
}
