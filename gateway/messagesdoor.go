package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/messages"
)

// HeaderDroppedTools names the hosted tools a door left out of the request (under
// hosted_tools: drop), comma-separated.
const HeaderDroppedTools = "X-Maskgate-Dropped-Tools"

// HeaderWarning carries, one value each, what was left out of the conversation the
// client sent (a document a door could not read, an image the engine cannot: a
// backends.ContentNoter's notes); the model reads a note in its place.
const HeaderWarning = "X-Maskgate-Warning"

// warn sets each warning as a HeaderWarning value and logs where it was (a warning's
// path, before ": "; the rest may quote a document's title, which logs never hold).
func warn(log *slog.Logger, w http.ResponseWriter, door string, warnings []string) {
	for _, m := range warnings {
		w.Header().Add(HeaderWarning, strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, m))
		at, _, _ := strings.Cut(m, ": ")
		log.Warn("content left out of the conversation", "door", door, "at", at)
	}
}

// messagesDoor is POST /v1/messages: Anthropic's Messages API, translated to the
// pipeline's Chat Completions and back.
type messagesDoor struct {
	host    *doorHost
	rq      *messages.Request
	relayed anthropicUsage // the usage of a relayed answer
}

func (*messagesDoor) name() string { return "messages" }

func (d *messagesDoor) decode(r *http.Request, body []byte) (*request, error) {
	rq, derr := messages.Decode(body, messages.Options{Hosted: d.host.hosted})
	if derr != nil {
		return nil, derr
	}
	d.rq = rq
	chat := rq.ChatBody()
	env, err := oai.ParseEnvelope(chat)
	if err != nil {
		return nil, err
	}
	// metadata.user_id names the conversation (the chat body's "user", which the thread
	// reads, carries it already).
	q := &request{body: chat, env: env, early: true, effort: rq.ReasoningEffort()}
	if rq.Tools != nil {
		// The client's tools are callable, less those it defers and has not found yet.
		q.clientTools = true
		q.hidden = slices.DeleteFunc(slices.Clone(rq.Deferred), func(n string) bool { return slices.Contains(rq.Referenced, n) })
		q.clientSearch = len(rq.Deferred) > 0 || len(rq.Referenced) > 0
	}
	return q, nil
}

// keepAliveFrame is Anthropic's own: a ping event.
func (*messagesDoor) keepAliveFrame() []byte { return keepAlivePing }

func (d *messagesDoor) sink(w http.ResponseWriter, x *exchange, q *request) door.Sink {
	if len(d.rq.Dropped) > 0 {
		w.Header().Set(HeaderDroppedTools, strings.Join(d.rq.Dropped, ","))
	}
	warn(d.host.log, w, "messages", d.rq.Warnings)
	mw := messages.NewWriter(&sseEvents{w: w, x: x}, q.env.Stream, "msg_"+randomID(), d.rq)
	if q.env.Stream {
		return mw
	}
	return &wholeOut{bodySink: mw, w: w, x: x}
}

func (*messagesDoor) writeError(w http.ResponseWriter, log *slog.Logger, err error) *apiError {
	return writeErrorAs(w, log, err, anthropicEnvelope)
}

// anthropicEnvelope renders e as Anthropic's error body.
func anthropicEnvelope(e *apiError) []byte {
	return messages.ErrorBody(doorError(e))
}

// messagesAPI is the handler of POST /v1/messages and its count_tokens.
type messagesAPI struct{ host *doorHost }

func (a messagesAPI) create(w http.ResponseWriter, r *http.Request) {
	a.host.serve(w, r, &messagesDoor{host: a.host})
}

// countTokens answers POST /v1/messages/count_tokens with the prompt's size as the
// gateway estimates it (tiktoken over the JSON the engine renders, as the context
// budget counts; four bytes a token without a tokenizer): Anthropic's own count is its
// model's tokenizer, which no engine here shares.
func (a messagesAPI) countTokens(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { writeErrorAs(w, a.host.log, err, anthropicEnvelope) }
	body, held, err := a.host.read(w, r)
	if err != nil {
		fail(err)
		return
	}
	defer a.host.release(held)
	rq, derr := messages.DecodeCount(body, messages.Options{Hosted: a.host.hosted})
	if derr != nil {
		fail(derr)
		return
	}
	if _, ok := a.host.router.lookup(rq.Model); !ok {
		fail(&apiError{Status: http.StatusNotFound, Type: "not_found_error", Param: "model", Code: "model_not_found",
			Message: "the model " + strconv.Quote(rq.Model) + " is not served by this gateway"})
		return
	}
	msgs := make([][]byte, len(rq.Messages))
	for i, m := range rq.Messages {
		msgs[i] = m
	}
	out := messages.CountResponse(a.host.count(rq.Tools, msgs))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// randomID is 24 random hex digits, for the ids the gateway gives its answers.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (*messagesDoor) native() string { return "messages" }

// inspect reads a message's usage, or a streamed event's (message_start's message's,
// message_delta's own).
func (d *messagesDoor) inspect(data []byte, u *oai.Usage) bool {
	if m, ok := oai.Get(data, "message"); ok {
		data = m
	}
	raw, ok := oai.Get(data, "usage")
	return ok && string(raw) != "null" && d.relayed.add(raw, u)
}

func (*messagesDoor) failEvent(e door.Error) (string, []byte) { return "error", messages.ErrorBody(e) }
