package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestRun_Quick is the load run's quick mode: a few seconds of streams from two keys.
// It asserts the run's checks — no error below the limits, 429s above them, memory
// flat, and at most 1 KiB of live heap left behind by each request of the run's second
// half (after a GC, nothing in flight; measured about 130 bytes) — and the report's
// shape; never a latency. A leak of 2 KiB a request, injected once into the gateway's
// handler while this check was written, failed it (2,204 bytes a request). Greedy's limit is low (30 at
// once, then one every 2 s) so that it is exceeded however slow the machine: its
// admitted streams hold at most 30 of its 32 workers, and its 429s are answered at once.
func TestRun_Quick(t *testing.T) {
	rep, err := Run(context.Background(), Config{Duration: 6 * time.Second, Rate: 100, Clients: 32, GreedyRPM: 30, Sample: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Markdown(&out)
	t.Logf("\n%s", out.String())
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if len(rep.Keys) != 2 || rep.Keys[0].Key != steady || rep.Keys[1].Key != greedy {
		t.Fatalf("keys %+v", rep.Keys)
	}
	s, g := rep.Keys[0], rep.Keys[1]
	if s.Sent == 0 || s.OK != s.Sent || s.TooMany != 0 || s.Other != 0 {
		t.Errorf("steady: %+v; want every request answered", s)
	}
	if g.TooMany == 0 || g.OK+g.TooMany != g.Sent || g.OK > g.ExpectedOKAtMost {
		t.Errorf("greedy: %+v; want 200s up to %d and 429s for the rest", g, g.ExpectedOKAtMost)
	}
	if m := rep.Memory; m.SecondHalfRequests < 50 || m.LiveEnd == 0 || m.RetainedPerRequest > 1024 {
		t.Errorf("memory: %d requests in the second half, live heap %d → %d bytes, %.0f bytes retained a request; want at most 1024 over 50 or more",
			m.SecondHalfRequests, m.LiveHalf, m.LiveEnd, m.RetainedPerRequest)
	}
	if !strings.Contains(out.String(), "| greedy | 30 requests/min |") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestRun_RefusesAGreedyLimitItWouldNotExceed(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"-rate", "1", "-greedy-rpm", "60"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "no 429") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
