package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/planner"
)

// chatDoor is POST /v1/chat/completions: the pipeline's own language, so decoding is
// reading the envelope, and an unmanaged answer is relayed byte for byte.
type chatDoor struct {
	known *planner.KnownTools // tools arrays validated before, per caller; nil: none
}

func (chatDoor) name() string { return "chat_completions" }

func (d chatDoor) decode(r *http.Request, body []byte) (*request, error) {
	var known oai.Known
	if d.known != nil {
		known = d.known.ForCaller(callerOf(r.Context()).name())
	}
	env, err := oai.ParseEnvelopeKnown(body, known)
	if err != nil {
		return nil, err
	}
	mapped, custom, err := chatCustomTools(body, env.Tools) // chatcustom.go
	if err != nil {
		return nil, err
	}
	if custom != nil {
		// The body was rewritten: its envelope is read again (only for custom tools).
		body = mapped
		if env, err = oai.ParseEnvelopeKnown(body, known); err != nil {
			return nil, err
		}
	}
	return &request{body: body, env: env, custom: custom}, nil
}

func (chatDoor) sink(w http.ResponseWriter, x *exchange, q *request) door.Sink {
	return &chatSink{w: w, x: x, includeUsage: q.env.IncludeUsage, custom: q.custom}
}

func (chatDoor) writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError {
	return writeError(w, log, err)
}

// chatAPI is the handler of POST /v1/chat/completions.
type chatAPI struct {
	host  *doorHost
	known *planner.KnownTools
}

func (a chatAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.host.serve(w, r, chatDoor{known: a.known})
}

// chatSink writes the tool loop's answer as Chat Completions: chunks over SSE, or the
// backend's last whole answer with the request's usage.
type chatSink struct {
	w            http.ResponseWriter
	x            *exchange
	rc           *http.ResponseController
	includeUsage bool
	calls        int
	custom       map[string]bool // the client's custom tools: their calls go back as custom calls

	id, model string // the backend's chunk identity, written into the gateway's chunks
	created   int64
}

func (c *chatSink) upstreamChunk(id, model string, created int64) {
	c.id, c.model, c.created = id, model, created
}

func (c *chatSink) rawWhole(body []byte, usage *oai.Usage) error {
	body, err := customWhole(body, c.custom)
	if err != nil {
		return err
	}
	out, err := withUsage(body, usage)
	if err != nil {
		return err
	}
	writeWhole(c.w, c.x, http.StatusOK, out) // the loop set x.usage and x.cache
	return nil
}

func (c *chatSink) Begin(door.Head) error {
	if !c.x.committed {
		commitStream(c.w, c.x)
	}
	c.rc = http.NewResponseController(c.w)
	empty := ""
	return c.chunk(oai.Delta{Role: "assistant", Content: &empty}, nil, nil)
}

// open commits the stream with a comment: OpenAI's streams have nothing before the
// first chunk, whose id and role are the engine's.
func (c *chatSink) open() error {
	if !c.x.committed {
		commitStream(c.w, c.x)
		c.rc = http.NewResponseController(c.w)
	}
	return c.send(keepAliveComment)
}

func (c *chatSink) Reasoning(d string) error {
	return c.chunk(oai.Delta{ReasoningContent: &d}, nil, nil)
}

func (c *chatSink) Text(d string) error { return c.chunk(oai.Delta{Content: &d}, nil, nil) }

func (c *chatSink) ToolCall(tc oai.ToolCall) error {
	i := c.calls
	c.calls++
	tc.Index = &i
	if c.custom[tc.Function.Name] {
		return c.customChunk(customCall(tc, &i))
	}
	return c.chunk(oai.Delta{ToolCalls: []oai.ToolCall{tc}}, nil, nil)
}

func (c *chatSink) End(finish string, usage *oai.Usage) error {
	if err := c.chunk(oai.Delta{}, &finish, nil); err != nil {
		return err
	}
	if c.includeUsage && usage != nil {
		if err := c.chunk(oai.Delta{}, nil, usage); err != nil {
			return err
		}
	}
	return c.send(sseDone)
}

func (c *chatSink) Fail(e door.Error) {
	_ = c.send(sseData, oai.NewErrorBody(e.Status, e.Message, e.Type, e.Param, e.Code).Marshal(), sseEnd)
}

func (c *chatSink) chunk(d oai.Delta, finish *string, usage *oai.Usage) error {
	ch := oai.Chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []oai.ChunkChoice{{Delta: d, FinishReason: finish}}, Usage: usage}
	if usage != nil {
		ch.Choices = []oai.ChunkChoice{}
	}
	b, _ := json.Marshal(ch)
	return c.send(sseData, b, sseEnd)
}

// customChunk is a chunk whose delta is one call to a custom tool, which oai.Delta
// cannot hold.
func (c *chatSink) customChunk(call []byte) error {
	ch := oai.Chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []oai.ChunkChoice{{}}}
	b, _ := json.Marshal(ch)
	b, err := oai.Set(b, "choices", []byte(`[{"index":0,"delta":{"tool_calls":[`+string(call)+`]},"finish_reason":null}]`))
	if err != nil {
		return err
	}
	return c.send(sseData, b, sseEnd)
}

// send writes one frame and flushes it; an error means the client is gone.
func (c *chatSink) send(parts ...[]byte) error {
	return sendFrame(c.w, c.rc, c.x, parts...)
}

// keepAliveFrame is an SSE comment: OpenAI's streams have no keep-alive chunk, and a
// comment is what every SSE parser skips.
func (chatDoor) keepAliveFrame() []byte { return keepAliveComment }

// commitStream sends a stream's headers: from here on errors go into the stream.
func commitStream(w http.ResponseWriter, x *exchange) {
	if x.cache == "" {
		x.cache = backends.CacheUnknown
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell nginx-like proxies in front not to buffer
	h.Set(HeaderStrategy, string(x.strategy))
	h.Set(HeaderCache, string(x.cache))
	setReplica(h, x)
	x.committed = true
	x.keep.lock()
	defer x.keep.unlock(true)
	w.WriteHeader(http.StatusOK)
}

// sendFrame writes parts and flushes them, counting the time as the client's.
func sendFrame(w http.ResponseWriter, rc *http.ResponseController, x *exchange, parts ...[]byte) error {
	t := x.now()
	defer func() { x.client += x.now().Sub(t) }()
	if x.ttft == 0 {
		x.ttft = x.now().Sub(x.start)
	}
	x.lastFrame = x.now().Sub(x.start)
	x.keep.lock()
	defer x.keep.unlock(false)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return rc.Flush()
}

// sseEvents writes a door's events as named server-sent events, committing the
// stream's headers at the first.
type sseEvents struct {
	w  http.ResponseWriter
	x  *exchange
	rc *http.ResponseController
}

var (
	sseEvent = []byte("event: ")
	sseLine  = []byte("\n")
)

func (e *sseEvents) Event(name string, data []byte) error {
	if !e.x.committed {
		commitStream(e.w, e.x)
		e.rc = http.NewResponseController(e.w)
	}
	if name == "" {
		return sendFrame(e.w, e.rc, e.x, sseData, data, sseEnd)
	}
	return sendFrame(e.w, e.rc, e.x, sseEvent, []byte(name), sseLine, sseData, data, sseEnd)
}

// bodySink is a door's sink that, not streaming, has its whole answer at End.
type bodySink interface {
	door.Sink
	Body() []byte
}

// wholeOut sends a door's whole answer once its sink has it, with the gateway's headers.
type wholeOut struct {
	bodySink
	w http.ResponseWriter
	x *exchange
}

func (o *wholeOut) End(finish string, usage *oai.Usage) error {
	if err := o.bodySink.End(finish, usage); err != nil {
		return err
	}
	writeWhole(o.w, o.x, http.StatusOK, o.Body())
	return nil
}
