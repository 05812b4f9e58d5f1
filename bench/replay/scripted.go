package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/replay/workload"
)

// Round is one call from the gateway to the engine, as the engine side saw it.
type Round struct {
	Prompt, Cached, Completion int
	// TTFT is the seconds until the first output token (prefill); Decode the seconds of
	// the rest of the output. Measured on engine targets, modelled on the prefix model.
	TTFT, Decode float64
	// Call is the tool the model called, or "".
	Call string
	// Stray is a call to a tool that was not loaded.
	Stray bool
}

// roundLog collects rounds per thread, for the client to read after each turn.
type roundLog struct {
	mu     sync.Mutex
	rounds map[string][]Round
}

func newRoundLog() *roundLog { return &roundLog{rounds: map[string][]Round{}} }

// add files r under the gateway's thread id (salted and scoped to the caller's
// identity), which the client reads from the answer's X-Maskgate-Thread.
func (l *roundLog) add(thread string, r Round) {
	l.mu.Lock()
	l.rounds[thread] = append(l.rounds[thread], r)
	l.mu.Unlock()
}

// take returns and forgets thread's rounds.
func (l *roundLog) take(thread string) []Round {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rounds[thread]
	delete(l.rounds, thread)
	return r
}

// scriptedEngine puts the scripted model in front of a real engine. Every round is sent
// to the engine as the gateway built it — same prompt, same Allowed set, so the engine
// prefills, reuses its cache and runs its constraint for real — streamed, with at most
// gen output tokens; the engine's usage and timings are kept, and its output is replaced
// by the scripted model's reply, so the conversation is the same on every engine and
// strategy.
//
// The engine decoded other tokens than the reply, so its cache holds them after the
// prompt where the next request has the reply: the reply's few tokens are prefilled
// again next time, the same under every strategy.
type scriptedEngine struct {
	inner backends.Backend
	model workload.Model
	gen   int
	log   *roundLog
	read  bodyReader
	now   func() time.Time
	seq   atomic.Uint64
}

var (
	_ backends.Backend         = (*scriptedEngine)(nil)
	_ backends.ToolConstrainer = (*scriptedEngine)(nil)
	_ backends.ToolLoader      = (*scriptedEngine)(nil)
)

// LoadsTools is the engine's own answer (strategy index), as ConstrainsTools is.
func (s *scriptedEngine) LoadsTools() backends.LoadKind {
	if l, ok := s.inner.(backends.ToolLoader); ok {
		return l.LoadsTools()
	}
	return backends.LoadNone
}

// ConstrainsTools is the engine's own answer, so the gateway picks what it would.
func (s *scriptedEngine) ConstrainsTools() bool {
	c, ok := s.inner.(backends.ToolConstrainer)
	return ok && c.ConstrainsTools()
}

func (s *scriptedEngine) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	if req.Stream {
		return nil, errors.New("replay: the scripted engine answers whole responses only")
	}
	rq, err := s.read.read(req.Body)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	allowed := req.Allowed
	if !s.ConstrainsTools() {
		allowed = nil
	}
	reply, err := s.model.DecideRequest(rq.model(), allowed)
	if err != nil {
		return nil, err
	}
	// The same bytes as oai.Set of each in turn, in one copy of the body (Object.Edit).
	body := rq.obj.Edit(
		oai.Edit{Key: "stream", Value: []byte("true")},
		oai.Edit{Key: "stream_options", Value: []byte(`{"include_usage":true}`)},
		oai.Edit{Key: "max_tokens", Value: []byte(fmt.Sprint(s.gen))},
		oai.Edit{Key: "temperature", Value: []byte("0")},
	)
	sent := *req
	sent.Body, sent.Stream = body, true

	start := s.now()
	resp, err := s.inner.ChatCompletion(ctx, &sent)
	if err != nil {
		return nil, err
	}
	u, first, end, err := s.drain(resp, start)
	if err != nil {
		return nil, err
	}
	if u.PromptTokens == 0 {
		return nil, errors.New("replay: the engine reported no usage; it must send prompt_tokens (and cached_tokens) in a stream's last chunk")
	}
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	s.log.add(req.Thread, Round{
		Prompt: u.PromptTokens, Cached: cached, Completion: u.CompletionTokens, Call: reply.Call, Stray: reply.Stray,
		TTFT: first.Sub(start).Seconds(), Decode: end.Sub(first).Seconds(),
	})
	out := completionBody(fmt.Sprintf("replay-%d", s.seq.Add(1)), req.Model, reply, u.PromptTokens, cached, u.CompletionTokens)
	// The engine's own timings go on to the gateway, which learns the engine's costs from
	// them (strategy auto), as it would from the engine's answer itself.
	return &backends.Response{Body: out, Cache: resp.Cache, Timings: backends.TimingsOf(resp)}, nil
}

// drain reads the engine's answer to its end: the time of its first chunk, of its end,
// and its usage.
func (s *scriptedEngine) drain(resp *backends.Response, start time.Time) (u oai.Usage, first, end time.Time, err error) {
	if resp.Stream == nil { // an engine that ignored "stream"
		var whole struct {
			Usage *oai.Usage `json:"usage"`
		}
		if err := json.Unmarshal(resp.Body, &whole); err != nil || whole.Usage == nil {
			return u, first, end, fmt.Errorf("replay: engine answer without usage: %v", err)
		}
		t := s.now()
		return *whole.Usage, t, t, nil
	}
	defer resp.Stream.Close()
	for {
		data, err := resp.Stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return u, first, end, err
		}
		if first.IsZero() {
			first = s.now()
		}
		var c struct {
			Usage *oai.Usage `json:"usage"`
		}
		if json.Unmarshal(data, &c) == nil && c.Usage != nil {
			u = *c.Usage
		}
	}
	end = s.now()
	if first.IsZero() {
		first = end
	}
	return u, first, end, nil
}
