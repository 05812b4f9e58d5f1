package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/kvcache"
)

// Template tokens of the prefix model's renderer: ids above o200k_base's vocabulary, so
// they never collide with text.
const (
	tokBegin = 1<<20 + iota
	tokTurn
	tokEnd
	tokToolsOpen
	tokToolsClose
)

// renderer turns a chat request into tokens the way a ChatML/Hermes template lays it
// out: the system turn with the tools after its text, then one turn per message, then
// the assistant's generation prompt. Each message and each tool is tokenized on its own
// (o200k_base) and memoized, so a 500-tool prompt costs lookups, not BPE, after the
// first request; the split changes counts by a token here and there, the same way for
// every strategy. A whole tools array is memoized too, as the tokens between its
// delimiters: the catalog a run sends with every round is one lookup.
type renderer struct {
	codec tokenizer.Codec
	read  bodyReader
	mu    sync.Mutex
	memo  map[string][]int32
	tools map[string][]int32 // by the tools array's bytes; bounded by maxToolArrays
}

func newRenderer() (*renderer, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("o200k_base: %w", err)
	}
	return &renderer{codec: codec, memo: map[string][]int32{}}, nil
}

func (r *renderer) tokens(b []byte) []int32 {
	r.mu.Lock()
	t, ok := r.memo[string(b)]
	r.mu.Unlock()
	if ok {
		return t
	}
	ids, _, err := r.codec.Encode(string(b))
	if err != nil { // invalid UTF-8 only: a byte a token, as the byte fallback would
		ids = make([]uint, len(b))
		for i, c := range b {
			ids[i] = uint(c)
		}
	}
	t = make([]int32, len(ids))
	for i, id := range ids {
		t[i] = int32(id)
	}
	r.mu.Lock()
	r.memo[string(b)] = t
	r.mu.Unlock()
	return t
}

// prompt renders body's messages and tools. Message bytes are tokenized as they came, so
// a message the engine answered is the same tokens when it comes back in the next
// request.
func (r *renderer) prompt(body []byte) ([]int32, error) {
	req, err := r.read.read(body)
	if err != nil {
		return nil, err
	}
	return r.render(req, 0)
}

// render is prompt on a request already read, with room for spare more tokens (the
// completion the cache is told of).
func (r *renderer) render(req *request, spare int) ([]int32, error) {
	var msgs [][]byte
	if len(req.messages) > 0 && string(req.messages) != "null" {
		if err := oai.Elements(req.messages, func(m []byte) error {
			msgs = append(msgs, m)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("messages: %w", err)
		}
	}
	var tools []int32
	if len(req.tools) > 0 {
		var err error
		if tools, err = r.toolsTokens(req.tools); err != nil {
			return nil, err
		}
	}
	var system []byte
	if len(msgs) > 0 {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(msgs[0], &m) == nil && m.Role == "system" {
			system, msgs = msgs[0], msgs[1:]
		}
	}
	size := 2 + len(tools) + spare
	toks := make([][]int32, len(msgs))
	for i, m := range msgs {
		toks[i] = r.tokens(m)
		size += 2 + len(toks[i])
	}
	var sys []int32
	if system != nil || len(tools) > 0 {
		sys = r.tokens(system)
		size += 4 + len(sys)
	}
	out := make([]int32, 0, size)
	out = append(out, tokBegin)
	if system != nil || len(tools) > 0 {
		out = append(out, tokTurn)
		out = append(out, sys...)
		out = append(out, tools...)
		out = append(out, tokEnd)
	}
	for _, t := range toks {
		out = append(out, tokTurn)
		out = append(out, t...)
		out = append(out, tokEnd)
	}
	return append(out, tokTurn), nil
}

// toolsTokens is a tools array's tokens: tokToolsOpen, each tool's tokens, tokToolsClose;
// none for an empty array.
func (r *renderer) toolsTokens(arr []byte) ([]int32, error) {
	r.mu.Lock()
	t, ok := r.tools[string(arr)]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(arr, &elems); err != nil {
		return nil, err
	}
	if len(elems) > 0 {
		t = []int32{tokToolsOpen}
		for _, e := range elems {
			t = append(t, r.tokens(e)...)
		}
		t = append(t, tokToolsClose)
	}
	r.mu.Lock()
	if r.tools == nil || len(r.tools) >= maxToolArrays {
		r.tools = map[string][]int32{}
	}
	r.tools[string(arr)] = t
	r.mu.Unlock()
	return t, nil
}

// completion is what the engine generates for an answer: the message, then the end of
// its turn. The renderer keeps each role inside the message bytes and ends a prompt with
// an open turn, so a prompt followed by its completion is exactly the start of the next
// request's prompt.
func (r *renderer) completion(msg []byte) []int32 {
	return append(append([]int32(nil), r.tokens(msg)...), tokEnd)
}

// prefixEngine is the engine of the prefix-model target: no weights, a deterministic
// renderer, and kvcache's block prefix model for what a real engine would have cached.
// The scripted model answers; timings are modelled with kvcache's cost model for one
// H200 serving an 8B model.
type prefixEngine struct {
	render     *renderer
	cache      *kvcache.BlockCache
	model      workload.Model
	constrains bool
	log        *roundLog
	prefill    kvcache.PrefillCost
	decode     kvcache.DecodeCost
	seq        atomic.Uint64
}

var (
	_ backends.Backend         = (*prefixEngine)(nil)
	_ backends.ToolConstrainer = (*prefixEngine)(nil)
	_ backends.ToolLoader      = (*prefixEngine)(nil)
)

// ConstrainsTools says whether the modelled engine enforces Request.Allowed (vLLM with a
// structural tag does; -unconstrained models one that does not).
func (e *prefixEngine) ConstrainsTools() bool { return e.constrains }

// LoadsTools: an engine that enforces the allowed set serves strategy index by definition,
// as the llamacpp, vllm, sglang and embedded backends do: a loaded tool's schema comes in
// Request.Definitions, held to by the constraint and never rendered, so the prompt the
// model renders is Body's alone (the meta-tools with the catalog's index, the conversation
// with the load results' definitions in it). One that cannot enforce it serves none (the
// gateway then serves remove).
func (e *prefixEngine) LoadsTools() backends.LoadKind {
	if e.constrains {
		return backends.LoadByDefinition
	}
	return backends.LoadNone
}

func (e *prefixEngine) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	if req.Stream {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "stream",
			Message: "the prefix model answers whole responses only; send stream false"}
	}
	rq, err := e.render.read.read(req.Body)
	if err != nil {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: err.Error()}
	}
	// Room for the completion the cache is told of after the prompt: a scripted reply is a
	// few dozen tokens (more only reallocates).
	prompt, err := e.render.render(rq, 64)
	if err != nil {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: err.Error()}
	}
	allowed := req.Allowed
	if !e.constrains {
		allowed = nil
	}
	reply, err := e.model.DecideRequest(rq.model(), allowed)
	if err != nil {
		return nil, err
	}
	done := e.render.completion(reply.Message)
	const ns = "replay"
	cached := e.cache.Lookup(ns, prompt)
	e.cache.Insert(ns, append(prompt, done...)) // into the room render left: prompt keeps its length
	out := len(done)
	e.log.add(req.Thread, Round{
		Prompt: len(prompt), Cached: cached, Completion: out, Call: reply.Call, Stray: reply.Stray,
		TTFT:   e.prefill.Seconds(cached, len(prompt)-cached),
		Decode: e.decode.Seconds(len(prompt), out),
	})
	body := completionBody(fmt.Sprintf("replay-%d", e.seq.Add(1)), req.Model, reply, len(prompt), cached, out)
	return &backends.Response{Body: body, Cache: backends.CacheEstimated}, nil
}

// completionBody is a chat.completion object with the reply and its usage.
func completionBody(id, model string, reply workload.Reply, prompt, cached, completion int) []byte {
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}{
		ID: id, Object: "chat.completion", Model: model,
		Choices: []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		}{{Message: reply.Message, FinishReason: reply.Finish}},
		Usage: usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
			PromptTokensDetails: &usageDetails{CachedTokens: cached}},
	})
	return b
}

type usage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails *usageDetails `json:"prompt_tokens_details,omitempty"`
}

type usageDetails struct {
	CachedTokens int `json:"cached_tokens"`
}
