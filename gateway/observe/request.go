package observe

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/kvcache"
)

// Begun is what the pipeline knows when a request arrives: its id, its door and when.
type Begun struct {
	ID    string
	Door  string
	Start time.Time
}

// Round is what the pipeline knows as it begins an upstream call.
type Round struct {
	// N is the round of the tool loop, from 0; negative for a request relayed byte for
	// byte, which has no round of its own.
	N       int
	Backend string
	Stream  bool
	// Loaded, under strategy remove only, is the tools the engine sees in this call
	// (their names): a change between calls moves the prompt after them.
	Loaded []string
}

// Names is what a round's answer shows of its tool calls: their names, never their
// arguments. It is asked only when a span will hold them.
type Names interface {
	CallNames() []string
}

// Answer is what the pipeline knows once it has read a round's answer.
type Answer struct {
	Usage    *oai.Usage // nil: the backend reported none
	Model    string     // the model the backend answered with
	Finish   string
	Strategy string
	Replica  string
	Calls    int   // how many tool calls the answer holds
	Names    Names // their names, when Calls > 0
}

// Ended is what the pipeline knows when a request has ended: who, where, how, and what
// it cost the engine, never what was said.
type Ended struct {
	Start  time.Time
	Total  time.Duration
	ID     string
	Key    string // the caller's key name ("anonymous" without keys)
	Door   string
	Status int
	Stream bool
	// TTFT is the first streamed chunk, LastFrame the latest frame written to the
	// client, both from Start (0: none).
	TTFT, LastFrame time.Duration

	Backend  string
	Replica  string
	Strategy string // the strategy label the answer carried
	Profile  string // "" before a profile was chosen
	// Auto: the profile's strategy is auto, and Chose is what auto gave the request (its
	// plan's strategy) when tools were managed.
	Auto  bool
	Chose string

	// Usage is the request's, summed over rounds (nil: none reported); Account is the
	// gateway's reading of it (kvcache.Account), Cache where the cached count came from.
	Usage   *oai.Usage
	Account kvcache.Usage
	Cache   string

	// For a managed request: its thread ("" without one), the catalog version the engine
	// saw, the calls to tools outside the allowed set, whether its strategy is remove,
	// and whether the conversation starts with this request (nil: it does not).
	Thread         string
	CatalogVersion string
	DisabledCalls  int
	Remove         bool
	Opens          Opens
}

// Opens says whether a request opens its conversation: no assistant message among the
// client's. It is asked only of a thread the request log has not seen (reading the
// messages costs), and answers with that bool alone.
type Opens interface {
	OpensThread() bool
}

// Request is what a View keeps of one request between its events. The pipeline holds
// it (its zero value is ready) and hands a pointer to every event; only Model and
// Failed are the pipeline's to write.
type Request struct {
	// Model is the model the request named (after a profile alias, the backend model).
	Model string
	// Failed is the error code the request failed with, if it did ("" for an error
	// without a code): the spans' status description.
	Failed string

	respModel   string
	rounds      int
	noted       bool // a round's usage was noted
	firstPrompt int
	firstCached int
	firstKnown  bool // the first round reported its cached tokens
	lastPrompt  int
	loadedFirst uint64 // under remove: the loaded set of the first and last rounds
	loadedLast  uint64
	loadedMoved bool // and whether it changed between rounds

	span, round, upstream trace.Span // nil when tracing is off, or once ended
}

// noteRound keeps what the request log needs of one upstream answer's usage.
func (w *Request) noteRound(u *oai.Usage) {
	if u == nil {
		return
	}
	if !w.noted {
		w.noted = true
		w.firstPrompt = u.PromptTokens
		if d := u.PromptTokensDetails; d != nil {
			w.firstCached, w.firstKnown = d.CachedTokens, true
		}
	}
	w.lastPrompt = u.PromptTokens
}

// failedDesc is the status description of a failed request's spans: its code, else
// its status's text.
func failedDesc(w *Request, status int) string {
	if w.Failed != "" {
		return w.Failed
	}
	return http.StatusText(status)
}
