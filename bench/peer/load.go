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
)

// outcome is one request's fate. Latencies are timed from the moment it was sent; lag is
// how late that was against the schedule.
type outcome struct {
	sent  bool
	err   error
	lag   time.Duration
	first time.Duration // to the end of the first SSE event; streams only
	total time.Duration // to the last byte
}

var errOverloaded = errors.New("not sent: max-inflight requests were already outstanding on this path")

// openLoop sends count requests to p, request i at start + i/rate, whether or not the
// earlier ones have been answered, and waits for them all. Requests still outstanding
// past timeout are abandoned as failed. ctx stops the schedule early.
//
// Go's timers wake about once a millisecond at best, so at high rates the requests that
// fell due together leave together; the bursts are the same on every path.
func openLoop(ctx context.Context, p *path, body []byte, stream bool, rate float64, count int, timeout time.Duration, maxInFlight int) []outcome {
	out := make([]outcome, count)
	interval := time.Duration(float64(time.Second) / rate)
	var (
		wg       sync.WaitGroup
		inflight atomic.Int64
	)
	timer := time.NewTimer(0)
	<-timer.C
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
			out = out[:i]
			break
		}
		now := time.Now()
		if inflight.Load() >= int64(maxInFlight) {
			out[i] = outcome{sent: true, err: errOverloaded}
			continue
		}
		inflight.Add(1)
		wg.Add(1)
		go func(o *outcome, lag time.Duration) {
			defer wg.Done()
			defer inflight.Add(-1)
			*o = send(p, body, stream, timeout)
			o.lag = lag
		}(&out[i], now.Sub(due))
	}
	wg.Wait()
	return out
}

var readPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// send makes one request and reads the whole answer, noting when the first SSE event
// was complete, and checks that the answer is the upstream's in substance: a gateway
// may re-serialize it, so a whole answer need only be a 200 chat.completion carrying
// the upstream's text, and a stream one that carries every chunk and ends with [DONE].
func send(p *path, body []byte, stream bool, timeout time.Duration) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return outcome{sent: true, err: err}
	}
	for k, v := range p.header {
		req.Header[k] = v
	}
	bp := readPool.Get().(*[]byte)
	defer readPool.Put(bp)
	buf := (*bp)[:0]

	start := time.Now()
	resp, err := p.client.Do(req)
	if err != nil {
		return outcome{sent: true, err: err}
	}
	defer resp.Body.Close()
	o := outcome{sent: true}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := resp.Body.Read(buf[len(buf):cap(buf)])
		from := max(len(buf)-1, 0)
		buf = buf[:len(buf)+n]
		if stream && o.first == 0 && bytes.Contains(buf[from:], []byte("\n\n")) {
			o.first = time.Since(start)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			o.err = err
			*bp = buf
			return o
		}
	}
	o.total = time.Since(start)
	*bp = buf
	o.err = checkAnswer(resp.StatusCode, buf, stream)
	return o
}

var (
	wholeMark  = []byte(`"chat.completion"`)
	wholeText  = []byte(`take a jacket`)
	dataLine   = []byte("data: ")
	finishStop = []byte(`"finish_reason":"stop"`)
)

func checkAnswer(status int, got []byte, stream bool) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", status, got)
	}
	if !stream {
		if !bytes.Contains(got, wholeMark) || !bytes.Contains(got, wholeText) {
			return fmt.Errorf("answer is not the upstream's chat.completion: %.200s", got)
		}
		return nil
	}
	if !bytes.HasSuffix(got, []byte(doneFrame)) {
		return fmt.Errorf("stream of %d bytes does not end with [DONE]: ...%s", len(got), tail(got, 120))
	}
	// A gateway may drop the usage chunk when the client did not ask for it
	// (stream_options.include_usage), as OpenAI does; every other chunk must arrive.
	if n := bytes.Count(got, dataLine) - 1; n < streamChunks-1 || !bytes.Contains(got, finishStop) {
		return fmt.Errorf("stream has %d chunks before [DONE] (the upstream sent %d, usage included) and %s a finish_reason \"stop\"",
			n, streamChunks, map[bool]string{true: "has", false: "lacks"}[bytes.Contains(got, finishStop)])
	}
	for _, w := range streamText {
		if !bytes.Contains(got, []byte(w)) {
			return fmt.Errorf("stream lacks the text chunk %q", w)
		}
	}
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// warmUp sends count requests to p closed-loop from workers goroutines, unmeasured, so
// that each gateway has compiled its hot paths (V8's JIT needs a few thousand requests)
// and opened its connections before anything is timed. It returns how many failed and
// the first failure.
func warmUp(ctx context.Context, p *path, body []byte, stream bool, count, workers int, timeout time.Duration) (int, error) {
	var (
		next, failed atomic.Int64
		first        atomic.Value
		wg           sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(count) && ctx.Err() == nil {
				if o := send(p, body, stream, timeout); o.err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, o.err)
				}
			}
		}()
	}
	wg.Wait()
	err, _ := first.Load().(error)
	return int(failed.Load()), err
}
