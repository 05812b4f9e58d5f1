package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/access"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/responses"
	"github.com/maskgate/maskgate/gateway/respstore"
	"github.com/maskgate/maskgate/gateway/wsock"
)

// responsesDoor is POST /v1/responses, and each response.create of the WebSocket mode:
// OpenAI's Responses API translated to the pipeline's Chat Completions and back.
type responsesDoor struct {
	api *responsesAPI
	ws  *wsock.Session // the socket, in WebSocket mode; nil over HTTP

	id      string
	owner   string
	rq      *responses.Request
	history []json.RawMessage // the chat messages of the turns previous_response_id continues
	loaded  []json.RawMessage // tools earlier turns' searches loaded
	thread  string
	prev    *respstore.Response // the response previous_response_id names, when found
	out     *responses.Writer
	missing error // previous_response_id names no response of the caller's, or the store failed

	relayedSeq int64  // the last sequence_number of a relayed stream
	passedID   string // the id of a relayed response
}

func (*responsesDoor) name() string { return "responses" }

func (d *responsesDoor) decode(r *http.Request, body []byte) (*request, error) {
	d.owner = callerOf(r.Context()).name()
	var storeErr error
	rq, derr := responses.Decode(body, responses.Options{Hosted: d.api.host.hosted,
		Reference: d.api.references(r.Context(), d.owner, d.ws, &storeErr)})
	if storeErr != nil {
		return nil, respstore.Unavailable(storeErr)
	}
	if derr != nil {
		return nil, derr
	}
	if d.ws != nil {
		rq.Stream = true // the socket carries events whatever the body says
	}
	d.rq = rq
	d.relayedSeq = -1
	d.id = "resp_" + randomID()
	if id := rq.PreviousResponseID; id != "" {
		prev, err := d.previous(r.Context(), id)
		switch {
		case err != nil:
			// As below: a 503 unless an upstream that keeps its own responses answers.
			d.missing = respstore.Unavailable(err)
			prev = &respstore.Response{}
		case prev == nil:
			// Unless the request goes to an upstream that keeps its own responses
			// (passed through as it is), this is the answer.
			d.missing = &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "previous_response_id",
				Code: "previous_response_not_found", Message: "Previous response with id '" + id + "' not found."}
			prev = &respstore.Response{}
		default:
			d.prev = prev
		}
		d.history, d.thread, d.loaded = prev.History(), prev.Thread(), prev.Loaded()
		if err := historyTooLarge(d.api.historyBytes, d.history, d.loaded, rq.Messages); err != nil {
			return nil, err
		}
		if len(d.loaded) > 0 {
			if derr := rq.LoadTools(d.loaded); derr != nil {
				return nil, derr
			}
		}
	} else {
		if err := historyTooLarge(d.api.historyBytes, rq.Messages); err != nil {
			return nil, err
		}
		if rq.Store || d.ws != nil {
			// The first response of a chain that may be continued names its thread.
			d.thread = d.id
		}
	}
	chat := rq.ChatBody(d.history)
	env, err := oai.ParseEnvelope(chat)
	if err != nil {
		return nil, err
	}
	q := &request{body: chat, env: env, thread: d.thread, refuse: d.missing, early: true}
	if rq.Tools != nil {
		// The client's tools are callable, less those it defers and has not found yet.
		q.clientTools, q.hidden = true, rq.Deferred
		q.clientSearch = clientSearch(rq)
	}
	return q, nil
}

// previous finds the response a request continues: the socket's last one, else a
// stored one of the same identity.
func (d *responsesDoor) previous(ctx context.Context, id string) (*respstore.Response, error) {
	if d.ws != nil {
		if last, ok := d.ws.Load().(*respstore.Response); ok && last.ID() == id {
			return last, nil
		}
	}
	return d.api.store.Keeper().Load(ctx, d.owner, id)
}

// keep files the finished response: in the store when the client asked (store is
// true by default), and on the socket, where the next turn may continue it whatever
// store says.
func (d *responsesDoor) keep() {
	// The tools this request loaded are slices of its body, whose buffer is recycled once
	// the request ends: the stored response keeps copies. Its input messages are the
	// decoder's own bytes (responses.Request.InputMessages).
	hist := make([]json.RawMessage, 0, len(d.history)+len(d.rq.InputMessages)+1)
	hist = append(append(append(hist, d.history...), d.rq.InputMessages...), d.out.Messages()...)
	loaded := append(append([]json.RawMessage(nil), d.loaded...), cloneMessages(d.rq.Loaded)...)
	sr := respstore.NewResponse(d.id, d.owner, d.out.Body(), hist, d.thread, loaded).WithInput(cloneMessages(d.rq.Input))
	if d.ws != nil {
		d.ws.Store(sr)
	}
	if d.rq.Store && d.api.store.Stores() {
		// The answer is whole but not yet sent (Writer.Completed), so a client cannot
		// continue it before it is kept; a failure here is still only the log's (the
		// answer goes out; the next turn finds no response, or a 503 while the store is
		// down).
		if err := d.api.store.Keeper().Save(context.Background(), sr, d.prev); err != nil {
			d.api.host.log.Warn("response not stored", "response_id", d.id, "error", err)
		}
	}
}

// cloneMessages copies ms into one new buffer.
func cloneMessages(ms []json.RawMessage) []json.RawMessage {
	n := 0
	for _, m := range ms {
		n += len(m)
	}
	buf := make([]byte, 0, n)
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		buf = append(buf, m...)
		out[i] = buf[len(buf)-len(m) : len(buf) : len(buf)]
	}
	return out
}

func (d *responsesDoor) sink(w http.ResponseWriter, x *exchange, q *request) door.Sink {
	if len(d.rq.Dropped) > 0 {
		w.Header().Set(HeaderDroppedTools, strings.Join(d.rq.Dropped, ","))
	}
	warn(d.api.host.log, w, "responses", d.rq.Warnings)
	var ev door.Events = &sseEvents{w: w, x: x}
	if d.ws != nil {
		ev = &socketEvents{x: x, ws: d.ws}
	}
	d.out = responses.NewWriter(ev, q.env.Stream, d.id, d.rq)
	d.out.Now = d.api.host.now
	d.out.Completed = d.keep
	if q.env.Stream {
		return d.out
	}
	return &wholeOut{bodySink: d.out, w: w, x: x}
}

func (d *responsesDoor) writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError {
	if d.ws == nil {
		return writeError(w, log, err)
	}
	ae := toAPIError(err)
	log.Info("response failed", "request_id", w.Header().Get(HeaderRequestID), "status", ae.Status, "error", err)
	if ae.Status != StatusClientClosed {
		_ = d.ws.SendError(doorError(forClient(ae, w.Header().Get(HeaderRequestID))))
	}
	return ae
}

// responsesAPI is the Responses API's handlers: /v1/responses over HTTP and its
// WebSocket mode, stored responses by id, compaction and input token counts.
type responsesAPI struct {
	host  *doorHost
	store *respstore.Store
	// historyBytes bounds one chain's conversation (Options.HistoryBytes).
	historyBytes int64
	// passOwners are the ids of responses upstreams minted for requests passed to them,
	// by identity.
	passOwners *passOwners
	sockets    *wsock.Registry
	perKey     *socketCap // open sockets per identity
	ws         wsock.Options
	stopping   context.Context // done once the server stops: no new socket
}

// root is /v1/responses: POST creates a response; GET upgrades to the
// WebSocket mode.
func (a *responsesAPI) root(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost:
		a.host.serve(w, r, &responsesDoor{api: a})
	case r.Method == http.MethodGet && wsock.IsUpgrade(r):
		a.serveSocket(w, r)
	default:
		w.Header().Set("Allow", "POST, GET")
		writeError(w, a.host.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: r.Method + " is not allowed on /v1/responses; POST a response, or GET with a WebSocket upgrade"})
	}
}

// byID is GET and DELETE /v1/responses/{id}, for the caller's own stored
// responses; another identity's are as absent as unknown ones.
func (a *responsesAPI) byID(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/responses/")
	if rid, ok := strings.CutSuffix(id, "/input_items"); ok && rid != "" && !strings.Contains(rid, "/") {
		a.inputItems(w, r, rid)
		return
	}
	if id == "" || strings.Contains(id, "/") {
		writeError(w, a.host.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url",
			Message: "unknown path " + r.URL.Path})
		return
	}
	owner := callerOf(r.Context()).name()
	notFound := &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "response_id", Code: "response_not_found",
		Message: "Response with id '" + id + "' not found."}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		body, ok, err := a.store.Keeper().Body(r.Context(), owner, id)
		if err != nil {
			writeError(w, a.host.log, respstore.Unavailable(err))
			return
		}
		if !ok {
			writeError(w, a.host.log, notFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case http.MethodDelete:
		ok, err := a.store.Keeper().Drop(r.Context(), owner, id)
		if err != nil {
			writeError(w, a.host.log, respstore.Unavailable(err))
			return
		}
		if !ok {
			writeError(w, a.host.log, notFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Deleted bool   `json:"deleted"`
		}{id, "response", true})
		_, _ = w.Write(b)
	default:
		w.Header().Set("Allow", "GET, DELETE")
		writeError(w, a.host.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: r.Method + " is not allowed on /v1/responses/{id}; use GET or DELETE"})
	}
}

// socketEvents sends a response's events on its socket; the first commits the
// exchange (errors after it are events of the response, not an envelope).
type socketEvents struct {
	x  *exchange
	ws *wsock.Session
}

func (e *socketEvents) Event(name string, data []byte) error {
	e.x.committed = true
	if e.x.ttft == 0 {
		e.x.ttft = e.x.now().Sub(e.x.start)
	}
	t := e.x.now()
	err := e.ws.Event(name, data)
	e.x.client += e.x.now().Sub(t)
	return err
}

// serveSocket runs the WebSocket mode: each response.create message is one request
// through the pipeline, answered with the same events as over SSE; the last response
// stays on the socket, so a turn that continues it sends only its new input.
func (a *responsesAPI) serveSocket(w http.ResponseWriter, r *http.Request) {
	if a.stopping.Err() != nil {
		writeError(w, a.host.log, ErrShuttingDown)
		return
	}
	release, err := a.perKey.take(callerOf(r.Context()).name())
	if err != nil {
		writeError(w, a.host.log, err)
		return
	}
	defer release()
	base := r
	err = a.sockets.Serve(w, r, a.ws, func(ctx context.Context, msg []byte, sess *wsock.Session) {
		a.socketMessage(ctx, base, msg, sess)
	})
	if err != nil {
		a.host.log.Debug("websocket closed", "request_id", requestID(r.Context()), "error", err)
	}
}

// socketMessage runs one client message of a socket.
func (a *responsesAPI) socketMessage(ctx context.Context, base *http.Request, msg []byte, sess *wsock.Session) {
	obj, err := oai.ParseObject(msg) // wsock lets only JSON objects through
	if err != nil {
		_ = sess.SendError(door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json", Message: err.Error()})
		return
	}
	if typ, _ := obj.Get("type"); string(typ) != `"response.create"` {
		_ = sess.SendError(door.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "type", Code: "unknown_event",
			Message: "unsupported event type " + string(typ) + "; send response.create"})
		return
	}
	generate, _ := obj.Get("generate")
	// The transport's fields go; the rest is the body, in one copy.
	body := obj.Edit(oai.Edit{Key: "type", Delete: true}, oai.Edit{Key: "stream", Delete: true}, oai.Edit{Key: "generate", Delete: true})
	id := newRequestID("")
	ctx = access.WithKey(context.WithValue(ctx, requestIDKey{}, id), access.KeyOf(base.Context()))
	r := base.Clone(ctx)
	r.Body = http.NoBody
	w := &socketWriter{h: http.Header{HeaderRequestID: {id}}}
	if string(generate) == "false" {
		a.warmUp(w, r, body, sess)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	a.host.serve(w, r, &responsesDoor{api: a, ws: sess})
}

// socketWriter is the http.ResponseWriter a socket's message runs with: its headers are
// the message's own, and nothing is written through it (events go on the socket).
type socketWriter struct{ h http.Header }

func (w *socketWriter) Header() http.Header         { return w.h }
func (w *socketWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *socketWriter) WriteHeader(int)             {}

// clientSearch reports whether the client discovers tools itself: it defers some,
// declares a client-executed tool_search, or a search of its already loaded some.
func clientSearch(rq *responses.Request) bool {
	if len(rq.Deferred) > 0 || len(rq.Loaded) > 0 {
		return true
	}
	for _, n := range rq.Names {
		if n.Kind == "tool_search" {
			return true
		}
	}
	return false
}

func (*responsesDoor) native() string { return "responses" }

func (d *responsesDoor) passRequest(r *http.Request, body []byte) ([]byte, http.Header, passEdit, error) {
	if d.missing != nil && !d.api.passOwners.owns(d.owner, d.rq.PreviousResponseID) {
		return nil, nil, passEdit{}, d.missing // another identity's, or unknown: not sent
	}
	return prepareForPass(r, body, d.api.host, "OpenAI-Beta", passResponses)
}

// passed records the response the upstream minted as the caller's.
func (d *responsesDoor) passed() { d.api.passOwners.add(d.owner, d.passedID) }

// inspect reads a response object's usage, or a streamed event's response's, and
// notes the event's sequence number.
func (d *responsesDoor) inspect(data []byte, u *oai.Usage) bool {
	obj, err := oai.ParseObject(data)
	if err != nil {
		return false
	}
	if raw, ok := obj.Get("sequence_number"); ok {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			d.relayedSeq = n
		}
	}
	// The response: an event's (response.created first), or the whole answer.
	r, inEvent := obj.Get("response")
	if inEvent {
		if obj, err = oai.ParseObject(r); err != nil {
			return false
		}
	}
	if d.passedID == "" && (inEvent || strMember(obj.Bytes(), "object") == "response") {
		d.passedID = strMember(obj.Bytes(), "id")
	}
	raw, ok := obj.Get("usage")
	return ok && string(raw) != "null" && responsesUsage(raw, u)
}

func (d *responsesDoor) failEvent(e door.Error) (string, []byte) {
	return "error", responses.ErrorEvent(e, d.relayedSeq+1)
}
