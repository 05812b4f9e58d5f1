package backends

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
)

// Error is a failure the client should see with a given HTTP status, in the OpenAI error
// envelope. Backends return it for upstream errors they can classify; anything else that a
// backend returns the gateway reports as a 502.
type Error struct {
	// Status is the HTTP status for the client (e.g. 404 for an unknown model, 502 for an
	// unreachable upstream, or the upstream's own 4xx).
	Status int
	// Message, Type, Param and Code fill the envelope; zero values are left out (Type
	// defaults to one derived from Status).
	Message string
	Type    string
	Param   string
	Code    string
	// RetryAfter, when set, is sent to the client as the Retry-After header.
	RetryAfter string
	// Overflow is set when the request did not fit the model's context window (Code is
	// oai.CodeContextLength): each door words it the way its own API does, so an agent
	// compacts its history instead of failing every turn.
	Overflow *oai.Overflow
	// Err is the cause, for logs only: never shown to the client.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Unreachable is the error for an upstream that could not be reached (502).
func Unreachable(name string, err error) *Error {
	return &Error{
		Status:  http.StatusBadGateway,
		Message: fmt.Sprintf("backend %q is unreachable; check that it is running and that its url is right", name),
		Type:    "upstream_error",
		Code:    CodeUnreachable,
		Err:     err,
	}
}

// Timeout is the error for an upstream that did not answer in time (504).
func Timeout(name string, err error) *Error {
	return &Error{
		Status:  http.StatusGatewayTimeout,
		Message: fmt.Sprintf("backend %q did not answer in time; raise its timeout if it is slow", name),
		Type:    "upstream_error",
		Code:    CodeTimeout,
		Err:     err,
	}
}

// ModelNotFound is the error for a model the upstream does not have (404).
func ModelNotFound(model string, err error) *Error {
	return &Error{
		Status:  http.StatusNotFound,
		Message: fmt.Sprintf("model %q does not exist on the backend", model),
		Type:    "invalid_request_error",
		Param:   "model",
		Code:    "model_not_found",
		Err:     err,
	}
}

// BadRequest is a 400 the client must fix, naming param (the request field) when known.
func BadRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// BodyError is the 400 for a request body a translator could not decode into its wire
// types: a field of the wrong type is named as the param.
func BodyError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return BadRequest(te.Field, "invalid type for '%s': expected %s, got %s", te.Field, te.Type, te.Value)
	}
	return BadRequest("", "request body is not a valid chat completion request: %v", err)
}

// ContextOverflow is the 400 for a request that does not fit the model's context
// window: OpenAI's shape (invalid_request_error, param messages, code
// context_length_exceeded), with what is known of the sizes in o.
func ContextOverflow(msg string, o oai.Overflow, cause error) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages",
		Code: oai.CodeContextLength, Message: msg, Overflow: &o, Err: cause}
}

// Codes of the upstream failures the gateway itself diagnoses (the envelope's code).
const (
	CodeUnreachable  = "upstream_unreachable"
	CodeTimeout      = "upstream_timeout"
	CodeTruncated    = "upstream_truncated"
	CodeDisconnected = "upstream_disconnected"
	CodeTooLarge     = "upstream_response_too_large"
)

// Stalled is the error for an upstream that stopped sending mid-answer for longer
// than its idle timeout (504).
func Stalled(name string, le *LimitError) *Error {
	msg := fmt.Sprintf("backend %q stopped sending mid-answer; raise its idle_timeout if it pauses that long", name)
	if le.Limit > 0 {
		msg = fmt.Sprintf("backend %q sent nothing for %s mid-answer; raise its idle_timeout if it pauses that long", name, le.Limit)
	}
	return &Error{Status: http.StatusGatewayTimeout, Type: "upstream_error", Code: CodeTimeout, Message: msg, Err: le}
}

// TooLarge is the error for a whole answer over limit bytes (502).
func TooLarge(name string, limit int64) *Error {
	return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: CodeTooLarge,
		Message: fmt.Sprintf("backend %q sent an answer over %d bytes; raise its max_response_bytes if that is expected", name, limit)}
}
