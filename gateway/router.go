package gateway

import (
	"sort"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// Upstream is one configured backend and the model names it serves.
type Upstream struct {
	// Name is the backend's configured name; it labels metrics and logs.
	Name string
	// Kind is the backend's configured kind (llamacpp, vllm, ollama, openai, ...).
	Kind string
	// Models are the names routed here; "*" takes any name no upstream lists.
	Models []string
	// Backend serves the requests.
	Backend backends.Backend
	// ReasoningField is the member an assistant message's reasoning goes back to this
	// upstream under: "reasoning" (vLLM 0.11 on) or "reasoning_content" (llama-server,
	// SGLang, older vLLM). If empty, the name its answers last used, and before any did,
	// reasoning for kind vllm and reasoning_content for the rest.
	ReasoningField string
	// ContextWindow is the model's context length in tokens. If zero, unknown: no
	// request is refused for its size.
	ContextWindow int
	// MaxResponseBytes caps what a tool loop holds of one streamed round (its text and
	// calls, like a whole answer); above it the stream ends with
	// upstream_response_too_large. If zero, 64 MiB.
	MaxResponseBytes int64
	// MaxInFlight caps the requests sent to this backend at once; past it they wait in a
	// queue of MaxQueue, each for at most QueueTimeout (if zero, 30s), and are answered
	// 503 when it is full or the wait runs out. If zero, no cap.
	MaxInFlight  int
	MaxQueue     int
	QueueTimeout time.Duration
	// HintHeader, when set, is a header sent on every request to this backend naming
	// the request's conversation, for a session-affinity router between the gateway and
	// the engines (docs/scale-out.md: which router reads which header). If empty, none
	// is sent.
	HintHeader string
	// HintValue is what names the conversation, in HintHeader, SessionTokenHeader's
	// memory and NVExt's session_control: HintThread (if empty) or HintCaller.
	HintValue string
	// SessionTokenHeader, when set, is a header a router answers with and expects back
	// on the conversation's next request (llm-d's x-session-token): the gateway
	// remembers, per conversation, the last value it answered with and sends it back. If
	// empty, none is sent.
	SessionTokenHeader string
	// NVExt is what requests to this backend carry in the Chat Completions body's nvext
	// member for NVIDIA Dynamo (backends.NVExt); the zero value writes nothing.
	NVExt backends.NVExt
}

// What a routing hint names (Upstream.HintValue).
const (
	// HintThread is the request's thread id (X-Maskgate-Thread: salted, 32 hex
	// digits), so each conversation keeps its engine. A request that names no thread
	// (no X-Thread-Id, metadata.thread_id, prompt_cache_key or user, and no fingerprint)
	// sends no hint.
	HintThread = "thread"
	// HintCaller is a salted hash of the caller's identity (its key), so all of one
	// caller's conversations share an engine.
	HintCaller = "caller"
)

const defaultMaxResponseBytes = 64 << 20

// route is where one request goes.
type route struct {
	up *Upstream
	// label is the model label for metrics: the configured name, or "other" for a name
	// that only a wildcard matched, so clients cannot grow label cardinality.
	label string
	// reasoning is the name the upstream reads reasoning under, and learns it by.
	reasoning *reasoningName
}

// router maps a request's model to an upstream: exact names first, then the first
// upstream (in configuration order) that lists "*".
type router struct {
	exact    map[string]*Upstream
	wildcard *Upstream
	ups      []*Upstream
	// reasoning holds each upstream's reasoning name, learnt from its answers.
	reasoning map[*Upstream]*reasoningName
	// tokens holds the session tokens of each upstream with a SessionTokenHeader.
	tokens map[*Upstream]*backends.SessionTokens
}

func newRouter(ups []Upstream) *router {
	r := &router{exact: map[string]*Upstream{}, reasoning: map[*Upstream]*reasoningName{},
		tokens: map[*Upstream]*backends.SessionTokens{}}
	for i := range ups {
		u := &ups[i]
		r.ups = append(r.ups, u)
		r.reasoning[u] = newReasoningName(u)
		if u.SessionTokenHeader != "" {
			r.tokens[u] = &backends.SessionTokens{}
		}
		for _, m := range u.Models {
			if m == "*" {
				if r.wildcard == nil {
					r.wildcard = u
				}
				continue
			}
			if _, taken := r.exact[m]; !taken {
				r.exact[m] = u
			}
		}
	}
	return r
}

func (r *router) lookup(model string) (route, bool) {
	if u, ok := r.exact[model]; ok {
		return route{up: u, label: model, reasoning: r.reasoning[u]}, true
	}
	if r.wildcard != nil {
		return route{up: r.wildcard, label: "other", reasoning: r.reasoning[r.wildcard]}, true
	}
	return route{}, false
}

// names returns the explicitly configured model names, sorted.
func (r *router) names() []string {
	out := make([]string, 0, len(r.exact))
	for m := range r.exact {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
