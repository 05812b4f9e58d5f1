package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends"
)

// open sends one request through the shared exchange; the caller closes the body and
// then calls cancel. A 404 means the url is not a llama-server root, so it is the
// gateway's configuration, not the client's request, that is wrong: a 502 that says so.
func (b *Backend) open(parent context.Context, path string, body []byte, stream bool) (*http.Response, context.CancelCauseFunc, error) {
	accept := "application/json"
	if stream {
		accept = "text/event-stream"
	}
	resp, cancel, err := b.up.Open(parent, path, body, accept)
	var be *backends.Error
	if errors.As(err, &be) && be.Status == http.StatusNotFound {
		be.Status, be.Type, be.Code = http.StatusBadGateway, "upstream_error", "upstream_not_found"
		be.Message = fmt.Sprintf("backend %q answered 404 to %s (%s); check that its url is the llama-server root", b.opt.Name, path, be.Message)
	}
	return resp, cancel, err
}

// post sends a JSON body and reads the whole answer.
func (b *Backend) post(ctx context.Context, path string, body []byte, stream bool) ([]byte, error) {
	resp, cancel, err := b.open(ctx, path, body, stream)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	return backends.ReadAnswer(b.opt.Name, ctx, resp.Body, b.opt.MaxResponseBytes)
}

func (b *Backend) get(ctx context.Context, path string) ([]byte, error) {
	return b.post(ctx, path, nil, false)
}

// clip keeps an upstream message short enough to show.
func clip(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
