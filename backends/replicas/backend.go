package replicas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/kvcache"
)

// HeaderReplica tells the client which replica served it: its index in the configured
// list (urls[i]), never its address.
const HeaderReplica = "X-Maskgate-Replica"

// DefaultHealthInterval is how often Start's health check pings the replicas when
// Options.HealthInterval is zero.
const DefaultHealthInterval = 5 * time.Second

// Replica is one engine behind the backend.
type Replica struct {
	// ID names the replica to the router, which homes prefixes by it: keep it stable
	// across restarts (the URL as configured). It is logged, never sent to clients.
	ID string
	// Backend talks to the engine.
	Backend backends.Backend
}

// Options configure a Backend. The zero value of each field is its default.
type Options struct {
	// Name is the configured backend's name, for errors and logs.
	Name string
	// Replicas are the engines, in configured order; at least one. Indexes in
	// X-Maskgate-Replica are positions here.
	Replicas []Replica
	// HealthInterval is the pause between two rounds of health pings. If zero,
	// DefaultHealthInterval.
	HealthInterval time.Duration
	// PingTimeout bounds one replica's health ping. If zero, HealthInterval.
	PingTimeout time.Duration
	// Router tunes replica choice (load thresholds, thread memory).
	Router kvcache.RouterOptions
	// Logger records replicas going down and coming back. If nil, nothing is logged.
	Logger *slog.Logger
}

// Backend is a backends.Backend over several replicas of one engine.
type Backend struct {
	opt    Options
	router *kvcache.Router
	log    *slog.Logger

	startOnce sync.Once
	closeOnce sync.Once
	stop      context.CancelFunc // set by Start; guarded by startOnce
	done      chan struct{}      // closed when the health loop has ended
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ToolLoader      = (*Backend)(nil)
	_ backends.EndpointPasser  = (*Backend)(nil)
)

// New returns a Backend over o.Replicas, all taken to be up until shown otherwise.
// Call Start to run health checks.
func New(o Options) (*Backend, error) {
	if len(o.Replicas) == 0 {
		return nil, fmt.Errorf("backend %q: no replicas; list at least one url", o.Name)
	}
	ids := make([]string, len(o.Replicas))
	for i, r := range o.Replicas {
		if r.Backend == nil {
			return nil, fmt.Errorf("backend %q: replica %d has no backend", o.Name, i)
		}
		ids[i] = r.ID
	}
	router, err := kvcache.NewRouter(ids, o.Router)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", o.Name, err)
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = DefaultHealthInterval
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = o.HealthInterval
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Backend{opt: o, router: router, log: log.With("backend", o.Name), done: make(chan struct{})}, nil
}

// Router is the backend's replica router, for callers that report its state.
func (b *Backend) Router() *kvcache.Router { return b.router }

// ChatCompletion sends req to the replica the router picks, and to the next candidates
// while the failure is retryable and nothing has been received yet.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	return b.each(ctx, req, func(be backends.Backend) (*backends.Response, error) { return be.ChatCompletion(ctx, req) })
}

// PassesEndpoint reports true only when every replica serves endpoint.
func (b *Backend) PassesEndpoint(endpoint string) bool {
	for _, r := range b.opt.Replicas {
		if p, ok := r.Backend.(backends.EndpointPasser); !ok || !p.PassesEndpoint(endpoint) {
			return false
		}
	}
	return true
}

// PassEndpoint sends req to the endpoint of the replica the router picks, failing over
// as ChatCompletion does.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	return b.each(ctx, req, func(be backends.Backend) (*backends.Response, error) {
		p, ok := be.(backends.EndpointPasser)
		if !ok {
			return nil, fmt.Errorf("backend %q: a replica has no endpoint %q", b.opt.Name, endpoint)
		}
		return p.PassEndpoint(ctx, endpoint, req)
	})
}

// each asks, with call, the replica the router picks for req, and the next candidates
// while the failure is retryable and nothing has been received yet.
func (b *Backend) each(ctx context.Context, req *backends.Request, call func(backends.Backend) (*backends.Response, error)) (*backends.Response, error) {
	route := b.router.Pick(req.Prefix, req.Thread)
	var last error
	for n, i := range route.Order {
		resp, err := b.try(i, call)
		if err == nil {
			if b.router.MarkUp(i) { // tried because every other candidate failed, and it answered
				b.log.Info("replica up", "replica", i, "id", b.opt.Replicas[i].ID)
			}
			b.router.Served(req.Thread, req.Prefix, i)
			return resp, nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return nil, err
		}
		if unreachable(err) && b.router.MarkDown(i) {
			b.log.Warn("replica down", "replica", i, "id", b.opt.Replicas[i].ID, "error", err)
		}
		b.log.Info("replica failed before answering; trying the next", "replica", i, "attempt", n+1, "error", err)
		last = err
	}
	if len(route.Order) > 1 {
		return nil, fmt.Errorf("backend %q: all %d replicas failed, the last with: %w", b.opt.Name, len(route.Order), last)
	}
	return nil, last
}

// try asks replica i and, for a stream, waits for its first chunk, so that a replica
// that fails at once can still be skipped. The request counts as in flight on i until
// a whole answer is back or the stream is closed.
func (b *Backend) try(i int, call func(backends.Backend) (*backends.Response, error)) (*backends.Response, error) {
	b.router.Acquire(i)
	resp, err := call(b.opt.Replicas[i].Backend)
	if err != nil {
		b.router.Release(i)
		return nil, err
	}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set(HeaderReplica, strconv.Itoa(i))
	if resp.Stream == nil {
		b.router.Release(i)
		return resp, nil
	}
	first, err := resp.Stream.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		resp.Stream.Close()
		b.router.Release(i)
		return nil, err
	}
	resp.Stream = &committed{Stream: resp.Stream, first: first, firstErr: err, pending: true,
		release: func() { b.router.Release(i) }}
	return resp, nil
}

// retryable says whether another replica may succeed where one failed: it could not be
// reached, was too slow or busy, failed on its side, or broke its stream before the
// first chunk. A client error would be the same everywhere.
func retryable(err error) bool {
	var be *backends.Error
	if errors.As(err, &be) {
		switch be.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.Is(err, backends.ErrTruncated) || errors.As(err, &ne)
}

// unreachable says whether err shows the replica itself is gone (refused or reset
// connections), rather than slow or busy.
func unreachable(err error) bool {
	var be *backends.Error
	if errors.As(err, &be) {
		return be.Code == "upstream_unreachable"
	}
	var ne net.Error
	return errors.As(err, &ne) && !ne.Timeout()
}

// IsolatesCache reports true only when every replica honours Request.CacheSalt.
func (b *Backend) IsolatesCache() bool {
	for _, r := range b.opt.Replicas {
		if c, ok := r.Backend.(backends.CacheIsolator); !ok || !c.IsolatesCache() {
			return false
		}
	}
	return true
}

// LoadsTools is the replicas' way of serving strategy index when every replica has the
// same one, else LoadNone (the gateway then serves remove): a request, Definitions and
// all, may reach any replica, so each must read it the same way.
func (b *Backend) LoadsTools() backends.LoadKind {
	kind := backends.LoadNone
	for i, r := range b.opt.Replicas {
		l, ok := r.Backend.(backends.ToolLoader)
		if !ok {
			return backends.LoadNone
		}
		k := l.LoadsTools()
		if i > 0 && k != kind {
			return backends.LoadNone
		}
		kind = k
	}
	return kind
}

// ConstrainsTools reports true only when every replica enforces Request.Allowed, so the
// gateway picks the same tool strategy it would for one of them.
func (b *Backend) ConstrainsTools() bool {
	for _, r := range b.opt.Replicas {
		c, ok := r.Backend.(backends.ToolConstrainer)
		if !ok || !c.ConstrainsTools() {
			return false
		}
	}
	return true
}
