package gateway

import (
	"context"
	"net/http"
	"sync"

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
	Error string `json:"error,omitempty"`
}

// readyz probes every backend concurrently and answers 200 when at least one is ready,
// 503 when none is, with each backend's state in the body.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
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
			ctx, cancel := context.WithTimeout(r.Context(), s.opt.ProbeTimeout)
			defer cancel()
			if err := p.Ping(ctx); err != nil {
				out[i].Ready, out[i].Error = false, err.Error()
			}
		}()
	}
	wg.Wait()
	ready := false
	for _, b := range out {
		ready = ready || b.Ready
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"ready": ready, "backends": out})
}
