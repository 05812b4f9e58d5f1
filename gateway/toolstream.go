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
)

// roundStream is one streamed round as the loop sees it: text goes to the client as it
// comes; tool calls are held until the round ends, because only then is it known
// whether the gateway runs them (meta-tools, unloaded tools) or the client gets them.
type roundStream struct {
	content strings.Builder
	calls   map[int]*heldCall
	held    int64 // bytes of content and calls, capped by the backend's max_response_bytes
	finish  string
	usage   *oai.Usage
	id      string
	model   string
	created int64
}

// heldCall is one tool call as its deltas arrive.
type heldCall struct {
	id, typ    string
	name, args strings.Builder
}

// message is the assistant message the round produced, for the hidden exchange.
func (rs *roundStream) message() (json.RawMessage, []oai.ToolCall) {
	calls := rs.toolCalls()
	m := struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		ToolCalls []oai.ToolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant", ToolCalls: calls}
	if rs.content.Len() > 0 {
		text := rs.content.String()
		m.Content = &text
	}
	b, _ := json.Marshal(m)
	return b, calls
}

func (rs *roundStream) toolCalls() []oai.ToolCall {
	idx := make([]int, 0, len(rs.calls))
	for i := range rs.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]oai.ToolCall, 0, len(idx))
	for _, i := range idx {
		h := rs.calls[i]
		c := oai.ToolCall{ID: h.id, Type: h.typ, Function: oai.FunctionCall{Name: h.name.String(), Arguments: h.args.String()}}
		if c.Type == "" {
			c.Type = "function"
		}
		out = append(out, c)
	}
	return out
}

// streamLoop is serverLoop for a streaming client: every round streams, its text reaches
// the client at once, and its tool calls are either run by the gateway (and the loop goes
// on) or sent whole at the end.
func (s *Server) streamLoop(w http.ResponseWriter, r *http.Request, x *exchange, be backends.Backend, env *oai.Envelope, p *toolPlan) error {
	var total oai.Usage
	var sent bool // role chunk and headers are out
	var rc *http.ResponseController
	send := func(b []byte) bool {
		t := s.now()
		defer func() { x.client += s.now().Sub(t) }()
		if x.ttft == 0 {
			x.ttft = s.now().Sub(x.start)
		}
		if _, err := w.Write(sseData); err != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		if _, err := w.Write(sseEnd); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	commit := func(resp *backends.Response) {
		x.cache = resp.Cache
		if x.cache == "" {
			x.cache = backends.CacheUnknown
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		h.Set(HeaderStrategy, x.strategy)
		h.Set(HeaderCache, string(x.cache))
		x.committed = true
		w.WriteHeader(http.StatusOK)
		rc = http.NewResponseController(w)
	}

	var rs *roundStream
	for round := 0; ; round++ {
		body, err := s.upstreamBody(env.Object, p, true)
		if err != nil {
			return err
		}
		if o, err := oai.ParseObject(body); err == nil {
			body = requestUsage(o)
		}
		t := s.now()
		resp, err := be.ChatCompletion(r.Context(), s.backendRequest(x, p, body, env.Model, true))
		x.upstream += s.now().Sub(t)
		if err != nil {
			return err
		}
		if resp.Stream == nil {
			return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Message: "backend " + x.backend + " did not stream"}
		}
		if !x.committed {
			x.strategy = backendLabel(p, x.strategy, resp.Strategy)
		}
		rs, err = s.streamRound(resp, x, &sent, commit, send)
		resp.Stream.Close()
		if err != nil {
			if x.committed && !clientGone(r.Context()) {
				// The stream ends with the error, no [DONE].
				send(envelope(forClient(toAPIError(err), requestID(r.Context()))))
			}
			return err
		}
		if u := rs.usage; u != nil {
			addUsage(&total, u)
		}
		msg, calls := rs.message()
		if len(calls) == 0 || !s.needsRound(p, calls) {
			break
		}
		if round >= s.opt.MaxRounds {
			s.keepExchange(p)
			s.countDisabled(x, p, calls, outcomeRefused)
			err := s.roundsExceeded()
			if x.committed {
				send(envelope(forClient(toAPIError(err), requestID(r.Context()))))
			}
			return err
		}
		s.countDisabled(x, p, calls, outcomeRetried)
		s.runCalls(r, p, msg, calls)
	}
	s.keepExchange(p)
	x.usage = &total
	// The held tool calls, whole, then the finish reason, usage if asked, and [DONE].
	chunk := func(d oai.Delta, finish *string, usage *oai.Usage) []byte {
		c := oai.Chunk{ID: rs.id, Object: "chat.completion.chunk", Created: rs.created, Model: rs.model,
			Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}, Usage: usage}
		if usage != nil {
			c.Choices = []oai.ChunkChoice{}
		}
		b, _ := json.Marshal(c)
		return b
	}
	if !sent {
		commit(&backends.Response{Cache: x.cache})
		sent = true
		empty := ""
		if !send(chunk(oai.Delta{Role: "assistant", Content: &empty}, nil, nil)) {
			return gone(r.Context())
		}
	}
	calls := rs.toolCalls()
	for i := range calls {
		i := i
		calls[i].Index = &i
		if !send(chunk(oai.Delta{ToolCalls: calls[i : i+1]}, nil, nil)) {
			return gone(r.Context())
		}
	}
	finish := rs.finish
	if finish == "" {
		finish = oai.FinishStop
	}
	if !send(chunk(oai.Delta{}, &finish, nil)) {
		return gone(r.Context())
	}
	if env.IncludeUsage && !send(chunk(oai.Delta{}, nil, &total)) {
		return gone(r.Context())
	}
	if _, err := w.Write(sseDone); err != nil {
		return gone(r.Context())
	}
	_ = rc.Flush()
	return nil
}

// streamRound reads one upstream stream to its end, forwarding text and holding calls.
func (s *Server) streamRound(resp *backends.Response, x *exchange, sent *bool, commit func(*backends.Response), send func([]byte) bool) (*roundStream, error) {
	rs := &roundStream{calls: map[int]*heldCall{}}
	for {
		t := s.now()
		data, err := resp.Stream.Next()
		x.upstream += s.now().Sub(t)
		if errors.Is(err, io.EOF) {
			return rs, nil
		}
		if err != nil {
			return nil, err
		}
		var c oai.Chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_invalid_chunk",
				Message: "backend " + x.backend + " sent a chunk that is not a chat.completion.chunk", Err: err}
		}
		rs.id, rs.model, rs.created = c.ID, c.Model, c.Created
		if c.Usage != nil {
			rs.usage = c.Usage
		}
		if len(c.Choices) == 0 {
			continue
		}
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			rs.finish = *ch.FinishReason
		}
		for _, tc := range ch.Delta.ToolCalls {
			i := 0
			if tc.Index != nil {
				i = *tc.Index
			}
			held := rs.calls[i]
			if held == nil {
				held = &heldCall{}
				rs.calls[i] = held
			}
			if tc.ID != "" {
				held.id = tc.ID
			}
			if tc.Type != "" {
				held.typ = tc.Type
			}
			held.name.WriteString(tc.Function.Name)
			held.args.WriteString(tc.Function.Arguments)
			rs.held += int64(len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments))
		}
		if ch.Delta.Content != nil {
			rs.content.WriteString(*ch.Delta.Content)
			rs.held += int64(len(*ch.Delta.Content))
		}
		if rs.held > x.maxHeld {
			return nil, backends.TooLarge(x.backend, x.maxHeld)
		}
		if ch.Delta.Content == nil || *ch.Delta.Content == "" {
			continue
		}
		if !*sent {
			commit(resp)
			*sent = true
			empty := ""
			first, _ := json.Marshal(oai.Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
				Choices: []oai.ChunkChoice{{Delta: oai.Delta{Role: "assistant", Content: &empty}}}})
			if !send(first) {
				return nil, errClientGone
			}
		}
		text, _ := json.Marshal(oai.Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
			Choices: []oai.ChunkChoice{{Delta: oai.Delta{Content: ch.Delta.Content}}}})
		if !send(text) {
			return nil, errClientGone
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
}
