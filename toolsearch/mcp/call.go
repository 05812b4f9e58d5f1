package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call calls the tool id (a namespaced name from Tools) with the arguments
// args, a JSON object (empty means {}), within the timeout. bearer is the
// caller's token ("abc" or "Bearer abc"), sent as Authorization on this
// call's HTTP requests when ForwardAuth is set, and never otherwise.
//
// Every failure is a Result with IsError and a one-line Text the model can
// read. When the session has died (a stdio server exited, an HTTP session
// was lost), Call reconnects first.
func (s *Server) Call(ctx context.Context, id string, args json.RawMessage, bearer string) Result {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fail("tool %q cannot run: MCP server %q is closed", id, s.cfg.Name)
	}
	s.calls.Add(1)
	s.mu.Unlock()
	defer s.calls.Done()
	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, errTimeout)
	defer cancel()
	// Close ends calls in flight: the SDK's Close would wait for them.
	defer context.AfterFunc(s.life, func() { cancel() })()
	e, err := s.lookup(ctx, id)
	if err != nil {
		return s.failed(ctx, id, err)
	}
	if !e.allowed {
		return fail("tool %q is not allowed: the gateway's configuration of MCP server %q leaves it out", id, s.cfg.Name)
	}
	params := &sdk.CallToolParams{Name: e.name}
	if a := bytes.TrimSpace(args); len(a) == 0 || string(a) == "null" {
		params.Arguments = json.RawMessage(`{}`)
	} else if a[0] != '{' || !json.Valid(a) {
		return fail("the arguments of tool %q are not a JSON object", id)
	} else {
		params.Arguments = json.RawMessage(a)
	}
	if s.cfg.ForwardAuth && s.cfg.URL != "" {
		ctx = withBearer(ctx, bearer)
	}

	for retried := false; ; retried = true {
		cs, err := s.session(ctx, false)
		if err != nil {
			return s.failed(ctx, id, err)
		}
		res, err := cs.CallTool(ctx, params)
		if err == nil {
			r := Result{Text: render(res, MaxText), IsError: res.IsError}
			if r.IsError && r.Text == "" {
				r.Text = fmt.Sprintf("tool %q failed without a message", id)
			}
			return r
		}
		s.log.Debug("mcp: call failed", "server", s.cfg.Name, "tool", e.name, "error", err)
		if ctx.Err() != nil {
			return s.failed(ctx, id, err)
		}
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code != codeRejected {
			return s.failed(ctx, id, err) // the server's answer
		}
		// The request was surely not delivered: the connection was closed
		// before it left, the HTTP server forgot the session and refused it
		// unread, or no connection could be opened. Safe to send again, once,
		// on a new session.
		unsent := errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) ||
			errors.Is(err, syscall.ECONNREFUSED)
		if unsent {
			s.drop(cs)
			if !retried {
				continue
			}
			return fail("tool %q cannot run: MCP server %q cannot be reached: %v", id, s.cfg.Name, err)
		}
		// Otherwise it may have reached the server: never sent again.
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || !s.alive(ctx, cs) {
			s.drop(cs)
			return fail("tool %q failed: the connection to MCP server %q was lost during the call (the server may have exited): %v; the next call reconnects", id, s.cfg.Name, err)
		}
		return fail("tool %q failed: MCP server %q: %v", id, s.cfg.Name, err)
	}
}

// codeRejected is the code of the SDK's own error for a request its
// transport could not deliver (jsonrpc2.ErrRejected), not a server's.
const codeRejected = -32005

// alive reports whether cs answers a ping within a few seconds, and before
// the call's deadline. The ping carries no bearer token.
func (s *Server) alive(call context.Context, cs *sdk.ClientSession) bool {
	deadline := time.Now().Add(3 * time.Second)
	if d, ok := call.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(s.life, deadline)
	defer cancel()
	return cs.Ping(ctx, nil) == nil
}

// lookup finds the tool id, connecting first when nothing was ever listed.
func (s *Server) lookup(ctx context.Context, id string) (entry, error) {
	s.mu.Lock()
	e, ok := s.list.ids[id]
	listed := s.listed
	s.mu.Unlock()
	if ok {
		return e, nil
	}
	if !listed {
		if _, err := s.session(ctx, false); err != nil {
			return entry{}, err
		}
		s.mu.Lock()
		e, ok = s.list.ids[id]
		s.mu.Unlock()
		if ok {
			return e, nil
		}
	}
	return entry{}, errUnknown
}

var (
	errUnknown = errors.New("unknown tool")
	errTimeout = errors.New("timed out")
)

// failed explains err, from calling tool id, in one line.
func (s *Server) failed(ctx context.Context, id string, err error) Result {
	var (
		rpc  *jsonrpc.Error
		conn *connectError
	)
	switch {
	case errors.Is(err, errUnknown):
		return fail("unknown tool %q: MCP server %q has no such tool", id, s.cfg.Name)
	case errors.Is(err, errClosed) || s.life.Err() != nil:
		return fail("tool %q cannot run: MCP server %q is closed", id, s.cfg.Name)
	case context.Cause(ctx) == errTimeout:
		return fail("tool %q timed out after %v", id, s.timeout)
	case ctx.Err() != nil:
		return fail("tool %q was cancelled: %v", id, ctx.Err())
	case errors.As(err, &conn):
		return fail("tool %q cannot run: MCP server %q is not connected: %v", id, s.cfg.Name, conn.err)
	case errors.As(err, &rpc) && rpc.Code != codeRejected:
		return fail("tool %q failed: MCP server %q answered error %d: %s", id, s.cfg.Name, rpc.Code, rpc.Message)
	}
	return fail("tool %q failed: MCP server %q: %v", id, s.cfg.Name, err)
}

// fail is a failed Result, its text on one line.
func fail(format string, a ...any) Result {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")
	if len(msg) > 1000 {
		msg = strings.ToValidUTF8(msg[:1000], "") + "…"
	}
	return Result{Text: msg, IsError: true}
}
