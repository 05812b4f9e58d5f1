package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// StatusClientClosed is what logs and metrics record for a client that went away before
// its answer was complete (nginx's convention). The client never sees it.
const StatusClientClosed = 499

// apiError is a failure with what the client sees; Err is only logged. The gateway's own
// failures use the same type as the backends', so one mapping serves both.
type apiError = backends.Error

func badRequest(msg, param string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: msg, Type: "invalid_request_error", Param: param}
}

// toAPIError decides what the client sees for err. Errors it does not recognise are
// internal: the client gets a generic 500 and the log gets the detail.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var re *oai.RequestError
	if errors.As(err, &re) {
		return &apiError{Status: http.StatusBadRequest, Message: re.Message, Type: "invalid_request_error", Param: re.Param, Err: err}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
			Message: fmt.Sprintf("request body is larger than %d bytes; raise max_request_bytes to accept it", mbe.Limit), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &apiError{Status: StatusClientClosed, Message: "client closed the request", Err: err}
	}
	if errors.Is(err, backends.ErrTruncated) {
		return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_truncated",
			Message: "the backend's stream ended before it was complete", Err: err}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error",
		Message: "internal error in the gateway; see its log", Err: err}
}

// envelope renders e as the OpenAI error envelope.
func envelope(e *apiError) []byte {
	return oai.NewErrorBody(e.Status, e.Message, e.Type, e.Param, e.Code).Marshal()
}

// writeError sends err to the client as the envelope with its status, and logs it.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError {
	ae := toAPIError(err)
	level := slog.LevelInfo
	if ae.Status >= 500 {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "request failed", "status", ae.Status, "error", err)
	if ae.Status == StatusClientClosed {
		return ae // nobody to write to
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if ae.RetryAfter != "" {
		h.Set("Retry-After", ae.RetryAfter)
	}
	w.WriteHeader(ae.Status)
	_, _ = w.Write(envelope(ae))
	return ae
}
