package mcp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateAfter is how long closing a stdio server waits for it to exit
// after its stdin closes, before SIGTERM (and as long again before SIGKILL).
const terminateAfter = 2 * time.Second

// transport returns a new transport to the server: a fresh process for a
// command, or an HTTP connection.
func (s *Server) transport() sdk.Transport {
	if s.cfg.URL != "" {
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http}
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Dir
	cmd.Env = s.env
	cmd.Stderr = s.stderr
	// A grandchild holding stderr open must not keep Wait (and Close) hanging.
	cmd.WaitDelay = 3 * time.Second
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}
}

// bearerKey is the context key of the bearer token ForwardAuth forwards.
type bearerKey struct{}

// headerTransport adds the configured headers to every request, and the
// caller's bearer token to the requests of a call whose context holds one.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// deleteWait bounds the DELETE that ends an HTTP session: it is a courtesy,
// and a server may hold it until its handlers of the session's calls return.
const deleteWait = time.Second

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodDelete {
		ctx, cancel := context.WithTimeout(req.Context(), deleteWait)
		resp, err := t.roundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	return t.roundTrip(req)
}

// cancelBody cancels its request's context when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *headerTransport) roundTrip(req *http.Request) (*http.Response, error) {
	bearer, _ := req.Context().Value(bearerKey{}).(string)
	if len(t.headers) == 0 && bearer == "" {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not modify its request
	for k, v := range t.headers {
		if req.Header.Get(k) == "" { // the SDK's own headers win
			req.Header.Set(k, v)
		}
	}
	if bearer != "" {
		req.Header.Set("Authorization", bearer)
	}
	return t.base.RoundTrip(req)
}

// authorization is the Authorization value for a caller's bearer token,
// given bare ("abc") or whole ("Bearer abc").
func authorization(bearer string) string {
	bearer = strings.TrimSpace(bearer)
	if bearer == "" || strings.ContainsAny(bearer, "\r\n") {
		return ""
	}
	if len(bearer) > 7 && strings.EqualFold(bearer[:7], "bearer ") {
		return "Bearer " + strings.TrimSpace(bearer[7:])
	}
	return "Bearer " + bearer
}

// stderrLog logs a stdio server's stderr, line by line, at debug level, and
// keeps the last line for error messages.
type stderrLog struct {
	log    *slog.Logger
	server string

	mu   sync.Mutex
	buf  []byte
	last string
}

// maxStderrLine bounds a logged line; the rest of a longer one is dropped.
const maxStderrLine = 4096

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if room := maxStderrLine - len(w.buf); room > 0 {
				w.buf = append(w.buf, p[:min(room, len(p))]...)
			}
			break
		}
		if room := maxStderrLine - len(w.buf); room > 0 {
			w.buf = append(w.buf, p[:min(room, i)]...)
		}
		p = p[i+1:]
		w.line()
	}
	return n, nil
}

func (w *stderrLog) line() {
	line := strings.TrimSpace(string(w.buf))
	w.buf = w.buf[:0]
	if line == "" {
		return
	}
	w.last = line
	w.log.Debug("mcp: server stderr", "server", w.server, "line", line)
}

// lastLine returns the last line the server wrote to stderr.
func (w *stderrLog) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		return strings.TrimSpace(string(w.buf))
	}
	return w.last
}

// withBearer returns ctx carrying the Authorization value for bearer.
func withBearer(ctx context.Context, bearer string) context.Context {
	if a := authorization(bearer); a != "" {
		return context.WithValue(ctx, bearerKey{}, a)
	}
	return ctx
}
