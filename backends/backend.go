package backends

import (
	"context"
	"errors"
	"net/http"
)

// Backend answers chat completion requests in OpenAI shape.
type Backend interface {
	ChatCompletion(ctx context.Context, req *Request) (*Response, error)
}

// ModelLister is a backend that can say which models it serves.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// Pinger is a backend that can tell whether it is up without generating anything.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Request is one chat completion call.
type Request struct {
	// Body is an OpenAI chat completion request. For a pass-through backend these are the
	// client's bytes plus the gateway's edits; a translator decodes it into oai.ChatRequest.
	Body []byte
	// Model is the model name the upstream knows, already written into Body.
	Model string
	// Stream is true when Body asks for a stream ("stream": true).
	Stream bool
	// Allowed, when non-nil, are the only tools the model may call, while Body keeps
	// every tool in the prompt (strategy mask). The gateway sets it only for a
	// ToolConstrainer.
	Allowed []string
	// Prefix names the request's stable prompt prefix (under mask, the catalog version:
	// every session of a profile shares it), Thread its conversation. A backend with
	// replicas routes on them to the replica most likely to hold the prefix in its
	// cache. Either may be empty.
	Prefix string
	Thread string
	// CacheSalt, when set, must keep this request's prompt out of every prefix-cache
	// entry made under another salt, and theirs out of its (vLLM's cache_salt). The
	// gateway sets it only for callers whose key isolates its cache, and only on backends
	// that can (config refuses the others).
	CacheSalt string
	// Definitions, under strategy index on a LoadByDefinition backend, is an OpenAI tools
	// array of the tools in Allowed that Body's tools array leaves out: loaded tools
	// whose definitions reached the model in the conversation (load_tool results), in
	// load order, each rendered as the catalog renders it. The backend holds a call to
	// one of them to its schema as it holds calls to Body's tools, and never renders them
	// into the prompt. Nil under every other strategy.
	Definitions []byte
	// ToolsID, when set, identifies Body's tools array: requests with one ToolsID carry
	// byte-identical tools (the gateway's whole catalog under mask), so a backend may
	// keep what it derives from them. Empty when the tools have no such identity.
	ToolsID string
	// CatalogFirst asks a backend that renders the prompt itself (llama-server through
	// /apply-template, the embedded engine), or whose engine renders it from messages the
	// backend may order (vLLM, SGLang), to lay the tools out ahead of the client's
	// system prompt where the chat template allows it, so that sessions whose system
	// prompts differ still share the catalog's tokens in the engine's prefix cache. A
	// backend whose template cannot do it renders the template's own order.
	CatalogFirst bool
	// ReasoningEffort is the client's reasoning switch where Body cannot carry it (a
	// Messages request's thinking, which Chat Completions has no member for), one of
	// reasoning_effort's values. A backend that renders the prompt itself maps it onto
	// the chat template as it maps Body's reasoning_effort, which wins (backends/chatlayer);
	// others ignore it. Empty: no switch.
	ReasoningEffort string
}

// ToolConstrainer is a backend that enforces Request.Allowed while decoding (a token
// mask, a grammar, a structural tag), so the prompt can carry the whole catalog and stay
// byte-identical as the loaded set changes.
type ToolConstrainer interface {
	ConstrainsTools() bool
}

// LoadKind is how a backend serves strategy index (ToolLoader).
type LoadKind int

const (
	// LoadNone: the backend cannot serve index; the gateway serves remove instead.
	LoadNone LoadKind = iota
	// LoadByDefinition: the engine enforces Request.Allowed while decoding (the backend is
	// a ToolConstrainer) and reads each allowed tool's schema from Body's tools array or
	// from Request.Definitions; a tool's definition reaches the model only in the
	// conversation, in the result of the load_tool call that loaded it.
	LoadByDefinition
	// LoadDeferred: the upstream loads deferred tools natively (Anthropic's
	// tool_reference, OpenAI Responses' defer_loading with a client-executed
	// tool_search). Body's tools array carries the callable tools, then every other tool
	// of the catalog with "defer_loading": true as a member of its tool object; a tool
	// message answering a load_tool call holds the gateway's load result, a JSON object
	// whose "tools" member lists the definitions the load added, which the backend sends
	// as the upstream's reference to those tools in their place.
	LoadDeferred
)

// ToolLoader is a backend that can serve strategy index: the prompt carries a compact,
// byte-stable index of the catalog, and a tool's full definition reaches the model only
// when it is loaded, at the end of the conversation, so the prefix never moves.
type ToolLoader interface {
	LoadsTools() LoadKind
}

// DoorPasser is a backend whose upstream speaks one of the gateway's other doors itself
// (OpenAI's Responses API, Anthropic's Messages API). A request the gateway does not
// manage goes to it as the client sent it, and its answer comes back as the upstream
// sent it: nothing is translated twice.
type DoorPasser interface {
	// PassesDoor reports whether the upstream serves door ("responses", "messages").
	PassesDoor(door string) bool
	// PassDoor sends body, the client's bytes, to the door's endpoint with rawQuery
	// (the client's query string, "" for none) and header (the door's own request
	// headers the client sent, such as anthropic-beta), and returns the upstream's
	// success response, its body watched for stalls (Upstream.Open); the caller closes
	// the body, then calls cancel. An error status comes back as an error.
	PassDoor(ctx context.Context, door, rawQuery string, header http.Header, body []byte) (*http.Response, context.CancelCauseFunc, error)
}

// The OpenAI endpoints besides chat completions that engines serve themselves and the
// gateway passes through (EndpointPasser), by their path under /v1.
const (
	EndpointEmbeddings  = "embeddings"  // POST /v1/embeddings
	EndpointCompletions = "completions" // POST /v1/completions: legacy and fill-in-the-middle (suffix)
	EndpointRerank      = "rerank"      // POST /v1/rerank: vLLM, SGLang, llama-server --reranking
	EndpointScore       = "score"       // POST /v1/score: vLLM
)

// EndpointPasser is a backend whose upstream serves OpenAI endpoints besides chat
// completions itself (embeddings, legacy completions, rerank, score). The gateway passes
// such a request to it as the client sent it (less a model name an alias maps) and its
// answer back as the upstream sent it.
type EndpointPasser interface {
	// PassesEndpoint reports whether the upstream serves endpoint (EndpointEmbeddings,
	// ...).
	PassesEndpoint(endpoint string) bool
	// PassEndpoint sends req.Body to the endpoint under the upstream's /v1, under the
	// backend's deadlines, and returns its answer: Body, the whole JSON object, or, for
	// req.Stream, Stream, the data of each SSE event up to [DONE]. Model, Stream, Prefix,
	// Thread and CacheSalt are read as for ChatCompletion; the other fields are unused.
	// An error status comes back as an error.
	PassEndpoint(ctx context.Context, endpoint string, req *Request) (*Response, error)
}

// CacheIsolator is a backend that honours Request.CacheSalt: requests with different
// salts never share prefix-cache entries on its engine.
type CacheIsolator interface {
	IsolatesCache() bool
}

// Response is a backend's answer. Exactly one of Body and Stream is set.
type Response struct {
	// Body is a whole chat.completion object, for a request without "stream".
	Body []byte
	// Stream yields chat.completion.chunk objects, for a request with "stream": true.
	Stream Stream
	// Header carries upstream headers worth showing the client (e.g. x-request-id). May be nil.
	Header http.Header
	// Cache says where the usage's cached_tokens come from. Empty means the gateway decides
	// from the usage itself: reported when the upstream sent prompt_tokens_details.
	Cache CacheSource
	// Strategy, when set, is the tool strategy the backend applied (e.g. "mask" when it could
	// express the constraint, "remove" when it could not); it overrides the gateway's.
	Strategy string
	// Timings, for a whole answer, are the engine's own account of its time, where the
	// engine gives one. A stream gives its own through TimingsReporter.
	Timings *Timings
}

// Timings are an engine's own account of one call (llama-server's "timings"): the
// prompt tokens it reused and those it computed, how long computing them took, and the
// decode steps after the first output token (which comes from the prompt's last
// batch) with their time, after a context of Cached+Computed tokens. They are what the
// auto strategy's cost model fits an engine's prefill and decode costs to: the engine's
// clock leaves out the network, queueing and the gateway.
type Timings struct {
	Cached, Computed int
	PrefillSeconds   float64
	DecodeSteps      int
	DecodeSeconds    float64
}

// TimingsReporter is a Response.Stream that has the engine's Timings once it has been
// read to its end (nil if the engine sent none).
type TimingsReporter interface {
	Timings() *Timings
}

// TimingsOf returns the engine's timings of resp, whole or streamed (a stream read to
// its end), or nil.
func TimingsOf(resp *Response) *Timings {
	if resp == nil {
		return nil
	}
	if resp.Timings != nil {
		return resp.Timings
	}
	if r, ok := resp.Stream.(TimingsReporter); ok {
		return r.Timings()
	}
	return nil
}

// CacheSource says whether cached token counts were reported by the engine or estimated.
type CacheSource string

// Cache sources, as sent in the X-Maskgate-Cache header.
const (
	CacheReported  CacheSource = "reported"
	CacheEstimated CacheSource = "estimated"
	CacheUnknown   CacheSource = "unknown"
)

// Stream is a sequence of chat.completion.chunk objects.
type Stream interface {
	// Next returns the JSON of the next chunk. It returns io.EOF after the upstream's
	// terminating event ("data: [DONE]" for OpenAI, "done": true for Ollama), and
	// ErrTruncated when the upstream ended without it. The returned slice is valid until
	// the next call.
	Next() ([]byte, error)
	// Close releases the upstream connection; it is safe to call more than once.
	Close() error
}

// StreamReady is a Stream that can tell its next chunk has arrived already: Next would
// return it without waiting on the upstream. A relay writes such chunks after the one in
// hand and flushes once, as the upstream sent them together; it never holds back a chunk
// for one that has not come. False when unsure.
type StreamReady interface {
	Ready() bool
}

// ErrTruncated reports a stream that ended before the upstream said it was done.
var ErrTruncated = errors.New("upstream stream ended without a terminating event")
