package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// statusOverloaded is Anthropic's own status for "the API is temporarily overloaded"
// (API reference, "Errors": 529 overloaded_error).
const statusOverloaded = 529

// apiError is one of Anthropic's failures in the terms the client sees.
type apiError struct {
	status              int
	message, typ, param string
	code                string
}

// translateError maps an Anthropic error answer (status and body
// {"type":"error","error":{"type","message"}}) onto what the client should see:
//
//   - 529 overloaded_error → 503, so clients back off and retry as they do for OpenAI;
//   - 401 and 403 → 502: they are about the gateway's own key, which the client cannot fix;
//   - 404 for a model → 404 model_not_found; another 404 → 502 (the url is wrong);
//   - 400, 413 and 429 keep their status; other 5xx keep theirs, and backends.ResponseError
//     reports them as 502.
func translateError(name string, status int, body []byte) apiError {
	var eb errorBody
	msg, typ := "", ""
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		msg, typ = eb.Error.Message, eb.Error.Type
	} else {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	msg = clip(msg)
	e := apiError{status: status, message: msg}
	switch {
	case status == statusOverloaded || typ == "overloaded_error":
		e.status, e.typ, e.code = http.StatusServiceUnavailable, "server_error", "upstream_overloaded"
		e.message = fmt.Sprintf("backend %q is overloaded (Anthropic: %s); retry later", name, msg)
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		e.status = http.StatusBadGateway
		e.message = fmt.Sprintf("Anthropic refused the gateway's API key (%d %s: %s); check the key that api_key_env names", status, typ, msg)
	case status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "model"):
		e.typ, e.param, e.code = "invalid_request_error", "model", "model_not_found"
	case status == http.StatusNotFound:
		e.status = http.StatusBadGateway
		e.message = fmt.Sprintf("Anthropic answered 404 (%s); check that the backend url is https://api.anthropic.com, without /v1", msg)
	case status == http.StatusRequestEntityTooLarge:
		e.typ, e.code = "invalid_request_error", "request_too_large"
	case status == http.StatusTooManyRequests:
		e.typ = "rate_limit_error"
	case status < 500:
		e.typ = oai.ErrorType(status)
	}
	return e
}

// streamError is the error a mid-stream "error" event ends a stream with.
func streamError(name string, d *errorDetail) *backends.Error {
	status := http.StatusBadGateway
	switch d.Type {
	case "overloaded_error":
		status = http.StatusServiceUnavailable
	case "rate_limit_error":
		status = http.StatusTooManyRequests
	}
	return &backends.Error{Status: status, Type: "upstream_error", Code: "upstream_stream_error",
		Message: fmt.Sprintf("backend %q failed mid-stream: %s: %s", name, d.Type, clip(backends.Redact(d.Message)))}
}

// errorTranslator rewrites Anthropic's error answers into OpenAI error envelopes with
// the status of translateError before backends.Upstream reads them, so the shared
// classification (Retry-After kept for 429 and 503, 5xx reported as 502) applies as is.
type errorTranslator struct {
	rt   http.RoundTripper
	name string
}

func (t *errorTranslator) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.StatusCode < 300 {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	e := translateError(t.name, resp.StatusCode, body)
	out := oai.NewErrorBody(e.status, e.message, e.typ, e.param, e.code).Marshal()
	resp.StatusCode = e.status
	resp.Status = fmt.Sprintf("%d %s", e.status, http.StatusText(e.status))
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Length")
	return resp, nil
}

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
