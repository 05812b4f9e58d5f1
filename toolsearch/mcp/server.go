package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backoff of Start's background retries.
var (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// Result is what the model reads back from a tool call.
type Result struct {
	// Text is the result's content as text, at most MaxText bytes; a longer
	// one is cut and says so.
	Text string
	// IsError reports a failed call: the tool's own isError, or a failure to
	// call it at all, which Text then explains in one line.
	IsError bool
}

// Server is the gateway's client of one MCP server. Its methods are safe
// for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	timeout time.Duration
	allow   map[string]bool // nil: all
	client  *sdk.Client
	env     []string        // stdio
	stderr  *stderrLog      // stdio
	http    *http.Client    // streamable HTTP
	idle    *http.Transport // streamable HTTP, closed by Close

	life   context.Context // done at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines; Add only under mu while !closed
	calls  sync.WaitGroup // calls in flight; Add only under mu while !closed

	mu          sync.Mutex
	closed      bool
	started     bool
	sess        *sdk.ClientSession // nil while not connected
	dialing     *dial              // the connect in progress, or nil
	list        listing
	listed      bool // list holds a listing
	relisting   bool // relistLoop runs
	relistAgain bool // list_changed came while it ran
}

// dial is one connect and listing, shared by everyone waiting for it.
type dial struct {
	done  chan struct{}
	sess  *sdk.ClientSession // set before done closes, on success
	err   error
	quiet bool // no OnChange for this dial's listing: Start reads Tools itself; guarded by Server.mu
}

var errClosed = errors.New("closed")

// Open checks cfg and returns its server, not yet connected: Start
// connects, and a Call connects when needed.
func Open(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, timeout: cfg.Timeout}
	s.cfg.Args, s.cfg.Allow = slices.Clone(cfg.Args), slices.Clone(cfg.Allow)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	if cfg.Allow != nil {
		s.allow = make(map[string]bool, len(cfg.Allow))
		for _, a := range cfg.Allow {
			s.allow[a] = true
		}
	}
	if cfg.URL != "" {
		s.idle = http.DefaultTransport.(*http.Transport).Clone()
		headers := make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			headers[k] = v
		}
		s.http = &http.Client{Transport: &headerTransport{base: s.idle, headers: headers}}
	} else {
		s.env = childEnv(cfg.Env)
		s.stderr = &stderrLog{log: s.log, server: cfg.Name}
	}
	s.life, s.cancel = context.WithCancel(context.Background())
	s.client = sdk.NewClient(&sdk.Implementation{Name: "maskgate", Version: "1"}, &sdk.ClientOptions{
		Logger: s.log.With("server", cfg.Name),
		// No roots, sampling or elicitation: the gateway serves none.
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.toolsChanged() },
	})
	return s, nil
}

// Name returns the server's name.
func (s *Server) Name() string { return s.cfg.Name }

// Start connects and lists the server's tools, waiting at most the timeout
// (or until ctx is done). When that fails it returns the error and keeps
// retrying in the background, waiting 1s, doubling to 30s, until ctx is
// done or Close: pass a ctx that lives as long as the server should. A
// later success calls OnChange; a success here does not (the caller reads
// Tools when Start returns). Start may be called once.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("mcp server %q: %w", s.cfg.Name, errClosed)
	}
	if s.started {
		s.mu.Unlock()
		return fmt.Errorf("mcp server %q: already started", s.cfg.Name)
	}
	s.started = true
	s.mu.Unlock()

	_, err := s.session(ctx, true)
	if err == nil {
		return nil
	}
	if errors.Is(err, errClosed) {
		return fmt.Errorf("mcp server %q: %w", s.cfg.Name, err)
	}
	s.mu.Lock()
	if !s.closed {
		s.wg.Add(1)
		go s.retry(ctx)
	}
	s.mu.Unlock()
	return fmt.Errorf("mcp server %q: %w", s.cfg.Name, err)
}

// retry reconnects with backoff until a session is up, ctx is done or the
// server is closed.
func (s *Server) retry(ctx context.Context) {
	defer s.wg.Done()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(s.life, stop)()
	delay := retryFirst
	for {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.mu.Lock()
		up := s.sess != nil
		s.mu.Unlock()
		if up { // a call reconnected meanwhile
			return
		}
		_, err := s.session(ctx, false)
		if err == nil || errors.Is(err, errClosed) || ctx.Err() != nil {
			return
		}
		delay = min(2*delay, retryMax)
		s.log.Warn("mcp: server still not connected", "server", s.cfg.Name, "error", err, "retry_in", delay)
	}
}

// session returns the connected session, connecting (once, for all waiting
// callers) when there is none, waiting at most until ctx is done. quiet
// marks a connect whose listing must not call OnChange (Start's own).
func (s *Server) session(ctx context.Context, quiet bool) (*sdk.ClientSession, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	if cs := s.sess; cs != nil {
		s.mu.Unlock()
		return cs, nil
	}
	d := s.dialing
	if d == nil {
		d = &dial{done: make(chan struct{}), quiet: quiet}
		s.dialing = d
		s.wg.Add(1)
		go s.dial(d)
	}
	s.mu.Unlock()
	select {
	case <-d.done:
		if d.err != nil && !errors.Is(d.err, errClosed) {
			return nil, &connectError{d.err}
		}
		return d.sess, d.err
	case <-ctx.Done():
		s.mu.Lock()
		d.quiet = false // the caller gave up: whoever reads Tools learns of the list by OnChange
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// dial connects and lists the tools, bounded by the timeout and Close, and
// installs the session.
func (s *Server) dial(d *dial) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.life, s.timeout)
	defer cancel()
	cs, err := s.client.Connect(ctx, s.transport(), nil)
	var l listing
	if err == nil {
		l, err = s.listTools(ctx, cs)
		if err != nil {
			cs.Close()
		}
	}
	if err != nil {
		err = s.connectError(ctx, err)
		if s.life.Err() == nil {
			s.log.Warn("mcp: cannot connect", "server", s.cfg.Name, "error", err)
		}
	} else {
		s.log.Info("mcp: connected", "server", s.cfg.Name, "tools", len(l.tools))
	}

	s.mu.Lock()
	s.dialing = nil
	notify := false
	switch {
	case err != nil:
		d.err = err
	case s.closed:
		d.err = errClosed
		defer cs.Close()
	default:
		s.sess, d.sess = cs, cs
		notify = s.install(l) && !d.quiet
		s.wg.Add(1)
		go s.watch(cs)
	}
	close(d.done)
	s.mu.Unlock()
	if notify && s.cfg.OnChange != nil {
		s.cfg.OnChange()
	}
}

// connectError explains a failed connect.
func (s *Server) connectError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded && s.life.Err() == nil {
		err = fmt.Errorf("no answer within %v: %w", s.timeout, err)
	}
	if s.stderr != nil {
		if line := s.stderr.lastLine(); line != "" {
			err = fmt.Errorf("%w (the server's last stderr line: %q)", err, line)
		}
	}
	return err
}

// watch notices a session that ended (a stdio server that exited, a lost
// HTTP connection): the next call reconnects.
func (s *Server) watch(cs *sdk.ClientSession) {
	defer s.wg.Done()
	err := cs.Wait()
	s.mu.Lock()
	current := s.sess == cs
	if current {
		s.sess = nil
	}
	closed := s.closed
	s.mu.Unlock()
	cs.Close()
	if current && !closed {
		s.log.Warn("mcp: server connection ended; the next call reconnects", "server", s.cfg.Name, "error", err)
	}
}

// drop forgets cs, if it is still the session, and closes it in the
// background (closing may wait for a process to exit).
func (s *Server) drop(cs *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess == cs {
		s.sess = nil
	}
	if s.closed {
		s.mu.Unlock()
		cs.Close()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		cs.Close()
	}()
}

// connectError is a failure to connect.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// Close disconnects (a stdio server gets its stdin closed, then SIGTERM
// and SIGKILL if it lingers) and stops every background goroutine before
// it returns. Calls in flight fail; later ones fail at once. It is
// idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cs := s.sess
	s.sess = nil
	s.mu.Unlock()
	s.cancel()
	// Calls in flight end now, their cancellation sent, before the session
	// closes: closing waits for them, and a server may wait for their
	// handlers before it ends the session.
	s.calls.Wait()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	s.wg.Wait()
	if s.idle != nil {
		s.idle.CloseIdleConnections()
		if err != nil {
			// The DELETE that ends the session is a courtesy.
			s.log.Debug("mcp: ending the HTTP session", "server", s.cfg.Name, "error", err)
		}
		return nil
	}
	if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp server %q: close: %w", s.cfg.Name, err)
	}
	return nil
}
