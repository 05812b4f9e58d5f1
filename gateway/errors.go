package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// StatusClientClosed is what logs and metrics record for a client that went away before
// its answer was complete (nginx's convention). The client never sees it.
const StatusClientClosed = 499

// ErrShuttingDown is the cause with which Server.Stop cancels the requests in flight.
var ErrShuttingDown = errors.New("the gateway is shutting down")

// apiError is a failure with what the client sees; Err is only logged. The gateway's own
// failures use the same type as the backends', so one mapping serves both.
type apiError = backends.Error

func badRequest(msg, param string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: msg, Type: "invalid_request_error", Param: param}
}

// toAPIError decides what the client sees for err. Errors it does not recognise are
// internal (a bug): the client gets a generic 500 with the request id and the log gets
// the detail.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var de *door.Error
	if errors.As(err, &de) {
		return &apiError{Status: de.Status, Message: de.Message, Type: de.Type, Param: de.Param, Code: de.Code, Err: err}
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
	if errors.Is(err, errBodyTooSlow) {
		return &apiError{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Code: "request_timeout",
			Message: "the request body arrived too slowly (server.body_timeout, server.min_body_rate)", Err: err}
	}
	if errors.Is(err, ErrShuttingDown) {
		return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "server_shutting_down",
			Message: "the gateway is shutting down; retry the request", Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &apiError{Status: StatusClientClosed, Message: "client closed the request", Err: err}
	}
	if errors.Is(err, backends.ErrTruncated) {
		return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: backends.CodeTruncated,
			Message: "the backend's stream ended before it was complete", Err: err}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error",
		Message: "internal error in the gateway; see its log", Err: err}
}

// forClient is what the client sees of ae: an internal error names the request id
// under which the log has the detail, and no message carries anything that looks like
// a credential.
func forClient(ae *apiError, id string) *apiError {
	out := *ae
	if out.Status == http.StatusInternalServerError && out.Type == "server_error" && id != "" {
		out.Message = "internal error in the gateway (request id " + id + "); its log has the detail under that id"
	}
	out.Message = backends.Redact(out.Message)
	return &out
}

// envelope renders e as the OpenAI error envelope.
func envelope(e *apiError) []byte {
	return oai.NewErrorBody(e.Status, e.Message, e.Type, e.Param, e.Code).Marshal()
}

// writeError sends err to the client as the envelope with its status, and logs it
// under the request's id (the X-Request-Id the middleware set on w).
func writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError {
	return writeErrorAs(w, log, err, envelope)
}

// writeErrorAs is writeError with the door's own envelope.
func writeErrorAs(w http.ResponseWriter, log *slog.Logger, err error, render func(*apiError) []byte) *apiError {
	ae := toAPIError(err)
	id := w.Header().Get(HeaderRequestID)
	level := slog.LevelInfo
	if ae.Status >= 500 {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "request failed", "request_id", id, "status", ae.Status, "error", err)
	if ae.Status == StatusClientClosed {
		return ae // nobody to write to
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if ae.RetryAfter != "" {
		h.Set("Retry-After", ae.RetryAfter)
	}
	w.WriteHeader(ae.Status)
	_, _ = w.Write(render(forClient(ae, id)))
	return ae
}

// clientGone reports whether ctx ended because the client went away, rather than
// because the gateway is stopping.
func clientGone(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrShuttingDown)
}

// gone is the error for a write to the client that failed: it went away (499), unless
// the request had already ended for another reason.
func gone(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return errClientGone
}

// envelopeFor is the error envelope the client of r reads: Anthropic's on the Messages
// door and on /v1/models for a caller that sends anthropic-version (the two APIs share
// that path), OpenAI's elsewhere.
func envelopeFor(r *http.Request) func(*apiError) []byte {
	if r.URL.Path == "/v1/messages" || strings.HasPrefix(r.URL.Path, "/v1/messages/") {
		return anthropicEnvelope
	}
	if (r.URL.Path == "/v1/models" || strings.HasPrefix(r.URL.Path, "/v1/models/")) && anthropicCaller(r) {
		return anthropicEnvelope
	}
	return envelope
}
