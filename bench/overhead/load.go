package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/bench/overhead/workload"
)

// sample is one request's outcome. Latencies are timed from the moment it was sent; lag
// is how late that was against the schedule.
type sample struct {
	sent  bool
	err   error
	lag   time.Duration
	first time.Duration // to the end of the first event; streams only
	total time.Duration // to the last byte
}

var errOverloaded = errors.New("not sent: the load generator had max-inflight requests outstanding")

// pacer sends requests on an open-loop schedule: request i is due at start + i/rate,
// whether or not earlier ones have been answered.
type pacer struct {
	rate        float64
	timeout     time.Duration
	maxInFlight int64
}

// block sends len(out) requests to t on schedule, records them in out, and waits for
// them all. It stops scheduling when ctx is done; requests already sent run to their
// own timeout. It returns the time from the first due time to the last send.
//
// Go's timers wake no finer than about a millisecond on Linux, so at rates above 1000/s
// requests leave in small bursts: every request whose time has come goes at once. The
// bursts are the same for every path.
func (p *pacer) block(ctx context.Context, t *target, body []byte, stream bool, out []sample) time.Duration {
	interval := time.Duration(float64(time.Second) / p.rate)
	var (
		wg       sync.WaitGroup
		inflight atomic.Int64
		last     time.Time
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	start := time.Now()
	for i := range out {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
		last = time.Now()
		if inflight.Load() >= p.maxInFlight {
			out[i] = sample{sent: true, err: errOverloaded}
			continue
		}
		inflight.Add(1)
		wg.Add(1)
		go func(s *sample, lag time.Duration) {
			defer wg.Done()
			defer inflight.Add(-1)
			*s = p.send(t, body, stream)
			s.lag = lag
		}(&out[i], last.Sub(due))
	}
	wg.Wait()
	if last.IsZero() {
		return 0
	}
	return last.Sub(start) + interval
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// send makes one request and reads the whole answer, noting when the first SSE event
// was complete. The answer must be the upstream's: the same bytes for a whole response,
// a stream that ends with [DONE].
func (p *pacer) send(t *target, body []byte, stream bool) sample {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return sample{sent: true, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := (*bp)[:0]

	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return sample{sent: true, err: err}
	}
	defer resp.Body.Close()
	s := sample{sent: true}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := resp.Body.Read(buf[len(buf):cap(buf)])
		from := max(len(buf)-1, 0)
		buf = buf[:len(buf)+n]
		if stream && s.first == 0 && bytes.Contains(buf[from:], []byte("\n\n")) {
			s.first = time.Since(start)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.err = err
			return s
		}
	}
	s.total = time.Since(start)
	*bp = buf
	s.err = checkAnswer(resp.StatusCode, buf, stream)
	return s
}

func checkAnswer(status int, got []byte, stream bool) error {
	switch {
	case status != http.StatusOK:
		return fmt.Errorf("status %d: %.200s", status, got)
	case stream && !bytes.HasSuffix(got, []byte(workload.DoneFrame)):
		return fmt.Errorf("stream of %d bytes does not end with [DONE]", len(got))
	case !stream && !bytes.Equal(got, workload.Completion()):
		return fmt.Errorf("answer is not the upstream's: %.200s", got)
	}
	return nil
}
