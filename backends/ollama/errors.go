package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends/oai"

	"github.com/maskgate/maskgate/backends"
)

// classify turns a failed call into the error the client sees: the client went away
// (the context's cause, which the gateway reports as 499), the upstream was too slow
// (504), could not be reached (502), or answered with an error (its 4xx, 429 and 503 as
// they are, a missing model as 404, anything else as 502). ctx is the caller's context.
func (b *Backend) classify(ctx context.Context, model string, err error) error {
	if errors.Is(err, errHeaderTimeout) {
		return backends.Timeout(b.opt.Name, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("backend %q: %w", b.opt.Name, context.Cause(ctx))
	}
	var be *backends.Error // ours, from reading the answer
	if errors.As(err, &be) {
		return be
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return b.statusError(model, se)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_unauthorized",
			Message: fmt.Sprintf("backend %q refused the gateway (%d); the gateway sends no Ollama credentials", b.opt.Name, ae.StatusCode),
			Err:     err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return backends.Timeout(b.opt.Name, err)
		}
		return backends.Unreachable(b.opt.Name, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return backends.Timeout(b.opt.Name, err)
	}
	// What is left is Ollama's own failure inside a 200 answer (an {"error": ...} line) or
	// a line that is not a chat response. The api client reports a last line that the
	// connection cut off as such a line: one that starts an object but does not end it.
	if msg := err.Error(); strings.HasPrefix(msg, "{") && !json.Valid([]byte(msg)) {
		return fmt.Errorf("backend %q: %w (its last line was cut off)", b.opt.Name, backends.ErrTruncated)
	}
	return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error",
		Message: fmt.Sprintf("backend %q failed: %s", b.opt.Name, clip(backends.Redact(err.Error()))), Err: err}
}

func (b *Backend) statusError(model string, se api.StatusError) error {
	code := se.StatusCode
	msg := clip(backends.Redact(strings.TrimSpace(se.ErrorMessage)))
	if msg == "" {
		msg = http.StatusText(code)
	}
	cause := fmt.Errorf("backend %q answered %d: %w", b.opt.Name, code, se)
	if o, over := oai.ParseOverflow(msg, []byte(se.ErrorMessage)); over && code >= 400 {
		return backends.ContextOverflow(msg, o, cause)
	}
	lower := strings.ToLower(msg)
	switch {
	case code == http.StatusNotFound && model != "" && strings.Contains(lower, "model") && strings.Contains(lower, "not found"):
		return backends.ModelNotFound(model, cause)
	case code == http.StatusNotFound:
		return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_not_found",
			Message: fmt.Sprintf("backend %q answered 404 (%s); check that its url is the Ollama server root", b.opt.Name, msg),
			Err:     cause}
	case code >= 400 && code < 500, code == http.StatusServiceUnavailable:
		return &backends.Error{Status: code, Message: msg, Err: cause}
	default:
		return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error",
			Message: fmt.Sprintf("backend %q failed (%d): %s", b.opt.Name, code, msg), Err: cause}
	}
}

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
