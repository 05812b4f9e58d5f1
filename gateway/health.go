package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// healthz says the process is up. It asks nothing of the backends.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

type backendReadiness struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Ready bool   `json:"ready"`
	// Error says only that the probe failed ("unreachable"): the probe's own error can
	// carry an upstream's address or answer, and /readyz needs no key. The log has it.
	Error string `json:"error,omitempty"`
}

// readyTTL is how long one round of probes answers /readyz: it needs no key, and each
// round sends every backend a request with the operator's credentials, so a caller
// repeating it cannot make the gateway probe faster than this.
const readyTTL = 5 * time.Second

// readiness is the last round of probes, shared by every /readyz caller: one round at
// a time, reused for readyTTL on the server's clock.
type readiness struct {
	mu       sync.Mutex // held while a round runs: callers meanwhile wait for it
	at       time.Time
	backends []backendReadiness
	ready    bool
}

// readyz answers 200 when at least one backend is ready, 503 when none is, with each
// backend's state in the body, from a round of probes at most readyTTL old.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	rd := &s.readiness
	rd.mu.Lock()
	if rd.backends == nil || s.now().Sub(rd.at) >= readyTTL || s.now().Before(rd.at) {
		rd.backends, rd.ready = s.probe()
		rd.at = s.now()
	}
	out, ready := rd.backends, rd.ready
	rd.mu.Unlock()
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"ready": ready, "backends": out})
}

// probe pings every backend concurrently, each within ProbeTimeout, under the server's
// own context: a caller that hangs up does not fail the round others share.
func (s *Server) probe() ([]backendReadiness, bool) {
	out := make([]backendReadiness, len(s.router.ups))
	var wg sync.WaitGroup
	for i, u := range s.router.ups {
		out[i] = backendReadiness{Name: u.Name, Kind: u.Kind, Ready: true}
		p, ok := u.Backend.(backends.Pinger)
		if !ok {
			continue // nothing to probe: an in-process engine is ready when it exists
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), s.opt.ProbeTimeout)
			defer cancel()
			if err := p.Ping(ctx); err != nil {
				out[i].Ready, out[i].Error = false, "unreachable"
				s.log.Warn("readiness probe failed", "backend", u.Name, "error", err)
			}
		}()
	}
	wg.Wait()
	ready := false
	for _, b := range out {
		ready = ready || b.Ready
	}
	return out, ready
}
