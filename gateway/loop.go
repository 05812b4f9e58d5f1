package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/replicas"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/planner"
	"github.com/maskgate/maskgate/toolsearch/meta"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

// round is one answer of the backend as the loop reads it, whole or streamed.
type round struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     map[int]*heldCall
	held      int64 // bytes of content, reasoning and calls, capped by the backend's max_response_bytes
	finish    string
	usage     *oai.Usage
	id        string
	model     string
	created   int64
	raw       []byte // a whole answer's bytes
	stopSeq   string // the stop string that ended it, where the backend says (stop_reason)
}

// heldCall is one tool call as its deltas arrive.
type heldCall struct {
	id, typ    string
	name, args strings.Builder
}

// message is the assistant message the round produced, for the hidden exchange.
func (rd *round) message() (json.RawMessage, []oai.ToolCall) {
	calls := rd.toolCalls()
	m := struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		ToolCalls []oai.ToolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant", ToolCalls: calls}
	if rd.finish == oai.FinishLength {
		m.ToolCalls = closedArguments(calls) // the history's copy: see closedArguments
	}
	if rd.content.Len() > 0 {
		text := rd.content.String()
		m.Content = &text
	}
	b, _ := json.Marshal(m)
	return b, calls
}

func (rd *round) toolCalls() []oai.ToolCall {
	idx := make([]int, 0, len(rd.calls))
	for i := range rd.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]oai.ToolCall, 0, len(idx))
	for _, i := range idx {
		h := rd.calls[i]
		c := oai.ToolCall{ID: h.id, Type: h.typ, Function: oai.FunctionCall{Name: h.name.String(), Arguments: h.args.String()}}
		if c.Type == "" {
			c.Type = "function"
		}
		out = append(out, c)
	}
	return out
}

// chunkMeta is a sink that writes the backend's chunk identity into its own chunks
// (Chat Completions' id, model and created).
type chunkMeta interface {
	upstreamChunk(id, model string, created int64)
}

// opener is a streaming sink whose stream can open before its first output with bytes
// that say nothing (Chat Completions: an SSE comment), so that keep-alives can follow;
// from then on a failure goes out through Fail.
type opener interface {
	open() error
}

// rawWholer is a sink that answers a whole request with the backend's last answer as it
// is, its usage replaced by the request's (Chat Completions).
type rawWholer interface {
	rawWhole(body []byte, usage *oai.Usage) error
}

// loop runs a request through the backend and answers it through sk. With managed set
// it is the tool loop: the gateway answers search_tools and load_tool itself (and calls
// to tools that are not loaded, with an error the model can act on), appends call and
// result, and calls again, until the model answers or calls a loaded tool, or
// MaxRounds is spent; the exchange is kept for its thread and spliced back on the next
// request, so the engine's view of the conversation only grows at the end. Without it,
// q.body goes to the backend once.
//
// Streamed or not, every round is read the same way; a stream's text and reasoning
// reach the client as they come, and tool calls are held until the round ends, since
// only then is it known whether the gateway runs them or the client gets them.
func (s *Server) loop(r *http.Request, x *exchange, be backends.Backend, q *request, p *planner.Plan, managed bool, sk door.Sink) error {
	if err := oneChoice(q.env.Object); err != nil {
		return err // before anything is written
	}
	ctx := r.Context()
	stream := q.env.Stream
	begun := false
	begin := func() error {
		if begun {
			return nil
		}
		begun = true
		return sk.Begin(door.Head{Model: q.env.Model, Created: s.now().Unix()})
	}
	// fail ends a begun stream with err in the door's shape; err goes on to the metrics.
	fail := func(err error) error {
		if (begun || x.committed) && stream && !clientGone(ctx) {
			sk.Fail(doorError(forClient(toAPIError(err), x.id)))
		}
		return err
	}

	if stream && q.early && !s.opt.LateStreams {
		// The client learns at once that its request was taken, before a long prefill
		// or the gateway's own tool rounds; from here on an error is an event of the
		// stream.
		if err := begin(); err != nil {
			return gone(ctx)
		}
		x.ttft = 0 // the time to the first token is the model's, not the early events'
	}
	var total oai.Usage
	haveUsage := false
	var rd *round
	ran := 0 // calls the gateway answered itself, for max_tool_calls
	for n := 0; ; n++ {
		body := q.body
		if managed {
			var err error
			if body, err = p.UpstreamBody(q.env.Object, stream); err != nil {
				return fail(err)
			}
		}
		// A streamed body asks for usage already: the doors write it so, and so does
		// upstreamBody.
		rctx := s.ops.RoundBegun(ctx, &x.ops, observe.Round{N: n, Backend: x.backend, Stream: x.stream, Loaded: underRemove(s, p)}) // counts the round; with tracing, its spans
		t := s.now()
		resp, err := be.ChatCompletion(x.hinted(rctx), backendRequest(x, p, x.hintedBody(body), q.env.Model, stream))
		x.upstream += s.now().Sub(t)
		if err != nil {
			return fail(err)
		}
		if !x.committed {
			x.strategy = planner.Label(p, x.strategy, resp.Strategy)
			if v := resp.Header.Get(replicas.HeaderReplica); v != "" {
				x.replica = v // the replica of the round the answer's headers go out with
			}
		}
		if stream {
			if !x.committed {
				x.cache = resp.Cache
				if x.cache == "" {
					x.cache = backends.CacheUnknown
				}
			}
			rd, err = s.streamRound(resp, x, sk, begin)
			if resp.Stream != nil {
				resp.Stream.Close()
			}
		} else {
			rd, err = s.wholeRound(resp, x)
			if rd != nil {
				x.cache = cacheSource(resp.Cache, rd.usage)
			}
		}
		if err != nil {
			if errors.Is(err, errClientGone) {
				return gone(ctx)
			}
			return fail(err)
		}
		s.ops.RoundEnded(&x.ops, rd.answer(x))
		if t := backends.TimingsOf(resp); t != nil {
			x.engine = append(x.engine, *t)
		}
		if rd.usage != nil {
			addUsage(&total, rd.usage)
			haveUsage = true
		}
		if !managed {
			break
		}
		msg, calls := rd.message()
		if len(calls) == 0 || !s.needsRound(p, calls) {
			break
		}
		if k := builtinCalls(p, calls); q.maxToolCalls != nil && k > 0 && ran+k > *q.maxToolCalls {
			ignoreBuiltin(p, rd) // max_tool_calls spent: the turn ends here
			break
		} else {
			ran += k
		}
		if n >= p.Profile().MaxRounds {
			if err := p.Keep(ctx); err != nil {
				return fail(err)
			}
			s.countDisabled(x, p, calls, outcomeRefused)
			return fail(roundsExceeded(p))
		}
		s.countDisabled(x, p, calls, outcomeRetried)
		if o, ok := sk.(opener); ok && stream && !x.committed && !s.opt.LateStreams {
			// The gateway runs a round of its own: the client's stream opens now, with
			// bytes that say nothing, so keep-alives can cover the rounds to come.
			if err := o.open(); err != nil {
				return gone(ctx)
			}
			x.ttft = 0 // the model's first output sets it
		}
		p.SetCut(rd.finish == oai.FinishLength)
		if err := s.runCalls(r, p, msg, calls); err != nil {
			return fail(err)
		}
	}
	if managed {
		if err := p.Keep(ctx); err != nil {
			return fail(err)
		}
	} else if p != nil {
		if err := s.refuseStrays(x, p, rd, sk, stream, begin); err != nil {
			return gone(ctx)
		}
	}
	var usage *oai.Usage
	if haveUsage || managed {
		usage = &total
	}
	x.usage = usage
	if stream && usage != nil && x.cache == backends.CacheUnknown && usage.PromptTokensDetails != nil {
		x.cache = backends.CacheReported // too late for a header, right for the metrics and trailers
	}
	if rw, ok := sk.(rawWholer); ok && !stream && rd.raw != nil {
		return rw.rawWhole(rd.raw, usage)
	}
	if err := s.finish(sk, begin, rd, stream, usage); err != nil {
		return gone(ctx)
	}
	return nil
}

// refuseStrays takes out of rd, in client mode (where the gateway cannot answer the
// model itself), the calls to tools outside the allowed set, and tells the client so in
// the answer's text: the client sees, and can show the model, that the call was refused
// and why. An answer left with no call ends with stop.
func (s *Server) refuseStrays(x *exchange, p *planner.Plan, rd *round, sk door.Sink, stream bool, begin func() error) error {
	var note strings.Builder
	for i, c := range rd.calls {
		name := c.name.String()
		if meta.IsMeta(name) || p.Callable(name) {
			continue
		}
		delete(rd.calls, i)
		p.CountStrays(1)
		s.metrics.disabledCalls.WithLabelValues(x.backend, string(x.strategy), outcomeRefused).Inc()
		why := "it is not loaded in this conversation; load it with load_tool first"
		if t, ok := p.Catalog().Lookup(name); !ok {
			why = "no tool has that name"
		} else if !p.Allowed(policy.Load, t.Name) {
			why = "it is not available here"
		}
		fmt.Fprintf(&note, "\n[maskgate refused the call to %s: %s.]", quote(name), why)
	}
	if note.Len() == 0 {
		return nil
	}
	rd.raw = nil // the backend's answer is no longer the answer
	if len(rd.calls) == 0 && (rd.finish == oai.FinishToolCalls || rd.finish == "") {
		rd.finish = oai.FinishStop
	}
	text := note.String()
	if rd.content.Len() == 0 {
		text = text[1:]
	}
	if !stream {
		rd.content.WriteString(text)
		return nil
	}
	if err := begin(); err != nil {
		return err
	}
	return sk.Text(text)
}

// finish hands the last round's held output to the sink: for a whole answer all of it,
// for a stream the tool calls (its text went out as it came), then the end.
func (s *Server) finish(sk door.Sink, begin func() error, rd *round, stream bool, usage *oai.Usage) error {
	if err := begin(); err != nil {
		return err
	}
	if !stream {
		if rd.reasoning.Len() > 0 {
			if err := sk.Reasoning(rd.reasoning.String()); err != nil {
				return err
			}
		}
		if rd.content.Len() > 0 {
			if err := sk.Text(rd.content.String()); err != nil {
				return err
			}
		}
	}
	for _, c := range rd.toolCalls() {
		if err := sk.ToolCall(c); err != nil {
			return err
		}
	}
	finish := rd.finish
	if finish == "" {
		finish = oai.FinishStop
	}
	if rd.stopSeq != "" {
		tellStop(sk, rd.stopSeq)
	}
	return sk.End(finish, usage)
}

// wholeReply is what the loop reads of a whole answer.
type wholeReply struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Created int64  `json:"created"`
	Choices []struct {
		Message      oai.ResponseMessage `json:"message"`
		FinishReason string              `json:"finish_reason"`
		StopReason   json.RawMessage     `json:"stop_reason"`
	} `json:"choices"`
	Usage *oai.Usage `json:"usage"`
}

// wholeRound reads one whole answer.
func (s *Server) wholeRound(resp *backends.Response, x *exchange) (*round, error) {
	if resp.Body == nil {
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		return nil, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Message: "backend " + x.backend + " streamed a request that did not ask for it"}
	}
	var reply wholeReply
	if err := json.Unmarshal(resp.Body, &reply); err != nil || len(reply.Choices) == 0 {
		return nil, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_response",
			Message: fmt.Sprintf("backend %q returned a response without choices", x.backend), Err: err}
	}
	ch := reply.Choices[0]
	rd := &round{calls: map[int]*heldCall{}, finish: ch.FinishReason, usage: reply.Usage,
		id: reply.ID, model: reply.Model, created: reply.Created, raw: resp.Body, stopSeq: stopString(ch.StopReason)}
	if m := ch.Message; m.Content != nil {
		rd.content.WriteString(*m.Content)
	}
	if th := ch.Message.Thought(); th != nil {
		rd.reasoning.WriteString(*th)
		x.reasoning.saw(ch.Message.Reasoning != nil)
	}
	for i, c := range ch.Message.ToolCalls {
		h := &heldCall{id: c.ID, typ: c.Type}
		h.name.WriteString(c.Function.Name)
		h.args.WriteString(c.Function.Arguments)
		rd.calls[i] = h
	}
	return rd, nil
}

// streamRound reads one upstream stream to its end, forwarding text and reasoning to
// the sink (begun at the first of them) and holding calls.
func (s *Server) streamRound(resp *backends.Response, x *exchange, sk door.Sink, begin func() error) (*round, error) {
	if resp.Stream == nil {
		return nil, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Message: "backend " + x.backend + " did not stream"}
	}
	meta, _ := sk.(chunkMeta)
	rd := &round{calls: map[int]*heldCall{}}
	emit := func(delta *string, send func(string) error) error {
		if delta == nil || *delta == "" {
			return nil
		}
		if err := begin(); err != nil {
			return errClientGone
		}
		if send(*delta) != nil {
			return errClientGone
		}
		return nil
	}
	for {
		t := s.now()
		data, err := resp.Stream.Next()
		x.upstream += s.now().Sub(t)
		if errors.Is(err, io.EOF) {
			return rd, nil
		}
		if err != nil {
			return nil, err
		}
		var c oai.Chunk
		if err := decodeChunk(data, &c); err != nil {
			return nil, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_chunk",
				Message: "backend " + x.backend + " sent a chunk that is not a chat.completion.chunk", Err: err}
		}
		rd.id, rd.model, rd.created = c.ID, c.Model, c.Created
		if meta != nil {
			meta.upstreamChunk(c.ID, c.Model, c.Created)
		}
		if c.Usage != nil {
			rd.usage = c.Usage
		}
		if len(c.Choices) == 0 {
			continue
		}
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			rd.finish = *ch.FinishReason
		}
		if s := stopString(ch.StopReason); s != "" {
			rd.stopSeq = s
		}
		for _, tc := range ch.Delta.ToolCalls {
			i := 0
			if tc.Index != nil {
				i = *tc.Index
			}
			held := rd.calls[i]
			if held == nil {
				held = &heldCall{}
				rd.calls[i] = held
			}
			if tc.ID != "" {
				held.id = tc.ID
			}
			if tc.Type != "" {
				held.typ = tc.Type
			}
			held.name.WriteString(tc.Function.Name)
			held.args.WriteString(tc.Function.Arguments)
			rd.held += int64(len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments))
		}
		d := ch.Delta
		th := d.Thought()
		if th != nil {
			rd.reasoning.WriteString(*th)
			rd.held += int64(len(*th))
			x.reasoning.saw(d.Reasoning != nil)
		}
		if d.Content != nil {
			rd.content.WriteString(*d.Content)
			rd.held += int64(len(*d.Content))
		}
		if rd.held > x.maxHeld {
			return nil, backends.TooLarge(x.backend, x.maxHeld)
		}
		if err := emit(th, sk.Reasoning); err != nil {
			return nil, err
		}
		if err := emit(d.Content, sk.Text); err != nil {
			return nil, err
		}
	}
}

// errClientGone is a failed write to the client; it counts as a cancelled request (499).
var errClientGone = fmt.Errorf("client went away: %w", context.Canceled)

func addUsage(total, u *oai.Usage) {
	total.PromptTokens += u.PromptTokens
	total.CompletionTokens += u.CompletionTokens
	total.TotalTokens += u.TotalTokens
	if u.PromptTokensDetails != nil {
		if total.PromptTokensDetails == nil {
			total.PromptTokensDetails = &oai.PromptTokensDetails{}
		}
		total.PromptTokensDetails.CachedTokens += u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		if total.CompletionTokensDetails == nil {
			total.CompletionTokensDetails = &oai.CompletionTokensDetails{}
		}
		total.CompletionTokensDetails.ReasoningTokens += u.CompletionTokensDetails.ReasoningTokens
	}
}
