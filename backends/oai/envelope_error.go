package oai

import (
	"encoding/json"
	"net/http"
)

// ErrorBody is the OpenAI error envelope: {"error":{"message","type","param","code"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of the envelope. Param and Code are null when unknown, as
// OpenAI sends them.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// NewErrorBody builds an envelope; empty param or code become null, and an empty type is
// derived from the HTTP status.
func NewErrorBody(status int, message, typ, param, code string) ErrorBody {
	if typ == "" {
		typ = ErrorType(status)
	}
	d := ErrorDetail{Message: message, Type: typ}
	if param != "" {
		d.Param = &param
	}
	if code != "" {
		d.Code = &code
	}
	return ErrorBody{Error: d}
}

// Marshal returns the envelope's JSON.
func (b ErrorBody) Marshal() []byte {
	out, err := json.Marshal(b)
	if err != nil { // only strings inside: cannot fail
		panic(err)
	}
	return out
}

// ErrorType is the OpenAI error type for an HTTP status.
func ErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status < 500:
		return "invalid_request_error"
	default:
		return "server_error"
	}
}

// ParseErrorBody reads an upstream's error body. It accepts the OpenAI envelope, a bare
// {"error":"text"} (Ollama, llama.cpp's older servers) and {"message": ...}; ok is false
// when body is none of these.
func ParseErrorBody(body []byte) (d ErrorDetail, ok bool) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return d, false
	}
	if len(env.Error) > 0 && env.Error[0] == '{' {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   json.RawMessage `json:"param"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(env.Error, &inner) != nil || inner.Message == "" {
			return d, false
		}
		d.Message, d.Type = inner.Message, inner.Type
		d.Param = scalarString(inner.Param)
		d.Code = scalarString(inner.Code)
		return d, true
	}
	if len(env.Error) > 0 && env.Error[0] == '"' {
		var s string
		if json.Unmarshal(env.Error, &s) == nil && s != "" {
			d.Message = s
			return d, true
		}
	}
	if env.Message != "" {
		d.Message = env.Message
		return d, true
	}
	if len(env.Detail) > 0 && env.Detail[0] == '"' { // FastAPI (vLLM) validation errors
		var s string
		if json.Unmarshal(env.Detail, &s) == nil && s != "" {
			d.Message = s
			return d, true
		}
	}
	return d, false
}

// scalarString renders a JSON string or number as text; null and others give nil.
func scalarString(raw json.RawMessage) *string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
	} else if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		s = string(raw)
	} else {
		return nil
	}
	return &s
}
