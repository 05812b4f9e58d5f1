package messages

import (
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// statusOverloaded is Anthropic's own status for overloaded_error.
const statusOverloaded = 529

// bad is a 400 about the request field at param (Anthropic's dotted path,
// messages.3.content.1); the message starts with the path, as Anthropic's do.
func bad(param, format string, args ...any) *door.Error {
	msg := fmt.Sprintf(format, args...)
	if param != "" {
		msg = param + ": " + msg
	}
	return &door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: msg}
}

// ErrorType is Anthropic's error type for a failure: by HTTP status (Messages API
// reference, "Errors"), or, for a failure with no status (one reported mid-stream), by
// its OpenAI type.
//
//	400 and other 4xx  invalid_request_error     429       rate_limit_error
//	401                authentication_error      500, 5xx  api_error
//	402                billing_error             503, 529  overloaded_error
//	403                permission_error          504       timeout_error
//	404                not_found_error
//	413                request_too_large
func ErrorType(e door.Error) string {
	switch s := e.Status; {
	case s == http.StatusUnauthorized:
		return "authentication_error"
	case s == http.StatusPaymentRequired:
		return "billing_error"
	case s == http.StatusForbidden:
		return "permission_error"
	case s == http.StatusNotFound:
		return "not_found_error"
	case s == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case s == http.StatusTooManyRequests:
		return "rate_limit_error"
	case s == http.StatusServiceUnavailable || s == statusOverloaded:
		return "overloaded_error"
	case s == http.StatusGatewayTimeout:
		return "timeout_error"
	case s >= 400 && s < 500:
		return "invalid_request_error"
	case s >= 500:
		return "api_error"
	}
	switch e.Type {
	case "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
		"rate_limit_error", "overloaded_error", "timeout_error", "billing_error", "request_too_large":
		return e.Type
	}
	return "api_error"
}

// ErrorBody is Anthropic's error envelope, {"type":"error","error":{"type","message"}},
// for a failure before output began (the gateway sends it with e.Status) and, as the data
// of an "error" event, for one after.
func ErrorBody(e door.Error) []byte {
	msg := e.Message
	if e.Overflow != nil {
		msg = overflowMessage(*e.Overflow, msg)
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if msg == "" {
		msg = "error"
	}
	b := make([]byte, 0, len(msg)+64)
	b = append(b, `{"type":"error","error":{"type":`...)
	b = appendString(b, ErrorType(e))
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	return append(b, "}}"...)
}

// overflowMessage words a context-window overflow as Anthropic does, which is what
// Claude Code reads to compact its history: "prompt is too long: N tokens > M maximum"
// for a prompt past the window, and for an answer's room (max_tokens) past what the
// prompt leaves, "input length and `max_tokens` exceed context limit: N + K > M, ...".
// Sizes the engine did not give leave its own words after "prompt is too long: ".
func overflowMessage(o oai.Overflow, engine string) string {
	switch {
	case o.Completion > 0 && o.Prompt > 0 && o.Window > 0:
		return fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again",
			o.Prompt, o.Completion, o.Window)
	case o.Prompt > 0 && o.Window > 0:
		return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", o.Prompt, o.Window)
	case engine == "":
		return "prompt is too long"
	}
	return "prompt is too long: " + engine
}
