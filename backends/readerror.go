package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/maskgate/maskgate/backends/sse"
)

// ReadError classifies a failed read of an answer whose headers had arrived, for
// backend name: the client went away (parent, the caller's context, is done: its cause
// is returned, which the gateway reports as 499 or, when the gateway is stopping, as
// such), a Watch limit passed (504 upstream_timeout), an event was over its cap (502
// upstream_response_too_large), or the upstream broke off. A stream that ended before
// its terminating event wraps ErrTruncated; a stream whose connection failed (a reset)
// is upstream_disconnected; a whole answer cut off either way is upstream_truncated.
func ReadError(name string, parent context.Context, err error, stream bool) error {
	if parent.Err() != nil {
		return fmt.Errorf("backend %q: %w", name, context.Cause(parent))
	}
	var le *LimitError
	if errors.As(err, &le) {
		if le.Cause == ErrIdleTimeout {
			return Stalled(name, le)
		}
		return Timeout(name, err)
	}
	if errors.Is(err, ErrIdleTimeout) {
		return Stalled(name, &LimitError{Cause: ErrIdleTimeout, Err: err})
	}
	if errors.Is(err, ErrHeaderTimeout) {
		return Timeout(name, err)
	}
	if errors.Is(err, sse.ErrTooLarge) {
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: CodeTooLarge,
			Message: fmt.Sprintf("backend %q sent a stream event larger than its max_event_bytes allows", name), Err: err}
	}
	ended := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case !stream:
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: CodeTruncated,
			Message: fmt.Sprintf("backend %q broke off its answer before it was complete", name),
			Err:     fmt.Errorf("%w: %v", ErrTruncated, err)}
	case ended:
		return fmt.Errorf("backend %q: %w", name, ErrTruncated)
	}
	return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: CodeDisconnected,
		Message: fmt.Sprintf("backend %q dropped the connection mid-stream", name), Err: err}
}

// ReadAnswer reads a whole answer of at most limit bytes (no limit when zero or less),
// with ReadError's classification of a failure and TooLarge above the limit.
func ReadAnswer(name string, parent context.Context, body io.Reader, limit int64) ([]byte, error) {
	if limit > 0 {
		body = io.LimitReader(body, limit+1)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, ReadError(name, parent, err, false)
	}
	if limit > 0 && int64(len(b)) > limit {
		return nil, TooLarge(name, limit)
	}
	return b, nil
}
