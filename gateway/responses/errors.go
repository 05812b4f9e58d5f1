package responses

import (
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// ErrorBody is e in OpenAI's error envelope, {"error":{"message","type","param","code"}},
// for an error answered before any output: plain HTTP with e.Status.
func ErrorBody(e door.Error) []byte {
	return oai.NewErrorBody(e.Status, e.Message, e.Type, e.Param, e.Code).Marshal()
}

func bad(param, code, format string, args ...any) *door.Error {
	return &door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Param: param,
		Message: fmt.Sprintf(format, args...)}
}

func typeErr(param, want string, got []byte) *door.Error {
	return bad(param, "invalid_type", "Invalid type for '%s': expected %s, but got %s.", param, want, kindOf(got))
}

func missing(param string) *door.Error {
	return bad(param, "missing_required_parameter", "Missing required parameter: '%s'.", param)
}

func invalid(param, format string, args ...any) *door.Error {
	return bad(param, "invalid_value", format, args...)
}

func unsupported(param, format string, args ...any) *door.Error {
	return bad(param, "unsupported_value", format, args...)
}
