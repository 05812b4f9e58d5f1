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
// every strategy.
type renderer struct {
	codec tokenizer.Codec
	mu    sync.Mutex
	memo  map[string][]int32
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
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	out := []int32{tokBegin}
	msgs := req.Messages
	var system json.RawMessage
	if len(msgs) > 0 {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(msgs[0], &m) == nil && m.Role == "system" {
			system, msgs = msgs[0], msgs[1:]
		}
	}
	if system != nil || len(req.Tools) > 0 {
		out = append(out, tokTurn)
		out = append(out, r.tokens(system)...)
		if len(req.Tools) > 0 {
			out = append(out, tokToolsOpen)
			for _, t := range req.Tools {
				out = append(out, r.tokens(t)...)
			}
			out = append(out, tokToolsClose)
		}
		out = append(out, tokEnd)
	}
	for _, m := range msgs {
		out = append(out, tokTurn)
		out = append(out, r.tokens(m)...)
		out = append(out, tokEnd)
	}
	return append(out, tokTurn), nil
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
)

// ConstrainsTools says whether the modelled engine enforces Request.Allowed (vLLM with a
// structural tag does; -constrains=false models one that does not).
func (e *prefixEngine) ConstrainsTools() bool { return e.constrains }

func (e *prefixEngine) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	if req.Stream {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "stream",
			Message: "the prefix model answers whole responses only; send stream false"}
	}
	prompt, err := e.render.prompt(req.Body)
	if err != nil {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: err.Error()}
	}
	allowed := req.Allowed
	if !e.constrains {
		allowed = nil
	}
	reply, err := e.model.Decide(req.Body, allowed)
	if err != nil {
		return nil, err
	}
	const ns = "replay"
	cached := e.cache.Lookup(ns, prompt)
	done := e.render.completion(reply.Message)
	e.cache.Insert(ns, append(append(make([]int32, 0, len(prompt)+len(done)), prompt...), done...))
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
