package anthropic

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolname"
)

// translated is an OpenAI request in the Messages API's terms, with what reading the
// answer needs.
type translated struct {
	// body is the POST /v1/messages request.
	body  []byte
	model string
	// names maps the client's tool names to the ones Anthropic saw; nil when none changed.
	names *toolname.Map
	// strategy is Response.Strategy: "remove" when the request carries tools, "index"
	// when some of them are deferred.
	strategy string
	// deferred is true when some tool is sent with defer_loading, which needs the tool
	// search beta (betaToolSearch).
	deferred bool
}

// block is one JSON object to send (a content block, a system block or a tool), kept
// apart from its cache breakpoint so the breakpoints can be placed once everything is
// converted.
type block struct {
	json  []byte
	cache bool
	// deferred marks a tool sent with defer_loading: it is not part of the cached
	// prefix, so no breakpoint goes on it.
	deferred bool
}

// turn is one Anthropic message. A user turn lists its tool results first: the Messages
// API wants the tool_result blocks that answer an assistant turn ahead of any other
// content of the next user turn ("Handle tool calls": formatting tool results).
type turn struct {
	role    string
	results []block
	blocks  []block
}

// last is the block serialized last, the one a breakpoint at the turn's end goes on.
func (t *turn) last() *block {
	if n := len(t.blocks); n > 0 {
		return &t.blocks[n-1]
	}
	return &t.results[len(t.results)-1]
}

// translateRequest turns an OpenAI chat completion body into a Messages API body for
// model (the body's own when empty), with maxTokens as max_tokens when the client sets
// none. The same body always gives the same bytes. Errors are 400s naming the field.
func translateRequest(body []byte, model string, maxTokens int) (*translated, error) {
	var r chatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, backends.BodyError(err)
	}
	if model == "" {
		model = r.Model
	}
	if model == "" {
		return nil, backends.BadRequest("model", "you must provide a model parameter")
	}
	if err := refuseUnsupported(&r); err != nil {
		return nil, err
	}
	if len(r.Messages) == 0 {
		return nil, backends.BadRequest("messages", "'messages' must contain at least one message")
	}
	names, err := nameMap(&r)
	if err != nil {
		return nil, err
	}
	choice, err := parseToolChoice(r.ToolChoice, r.Tools, r.ParallelToolCalls, names)
	if err != nil {
		return nil, err
	}
	deferred := deferredTools(r.Tools)
	if deferred != nil {
		// Under index every tool is sent, deferred or not, so the tools' bytes stay the
		// same across loads; the API itself keeps a deferred tool uncallable until a
		// tool_reference loads it.
		choice.send = nil
	}
	tools, err := convertTools(r.Tools, choice.send, names)
	if err != nil {
		return nil, err
	}
	system, turns, err := convertMessages(r.Messages, names, deferred)
	if err != nil {
		return nil, err
	}
	if len(turns) == 0 {
		return nil, backends.BadRequest("messages", "the messages hold no user or assistant content to send; Anthropic needs at least one")
	}
	placeBreakpoints(system, tools, turns)

	n := maxTokens
	switch {
	case r.MaxCompletionTokens != nil:
		n, err = positive("max_completion_tokens", *r.MaxCompletionTokens)
	case r.MaxTokens != nil:
		n, err = positive("max_tokens", *r.MaxTokens)
	}
	if err != nil {
		return nil, err
	}
	stop, err := stopSequences(r.Stop)
	if err != nil {
		return nil, err
	}
	temperature, err := number("temperature", r.Temperature, 1)
	if err != nil {
		return nil, err
	}
	topP, err := number("top_p", r.TopP, 1)
	if err != nil {
		return nil, err
	}
	topK, err := number("top_k", r.TopK, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	user, err := userID(r.User)
	if err != nil {
		return nil, err
	}

	// Members in a fixed order, each value either generated here or the client's bytes.
	out := make([]byte, 0, len(body)+256)
	out = append(out, `{"model":`...)
	out = appendString(out, model)
	out = append(out, `,"max_tokens":`...)
	out = strconv.AppendInt(out, int64(n), 10)
	if len(system) > 0 {
		out = append(out, `,"system":`...)
		out = appendBlocks(out, system)
	}
	out = append(out, `,"messages":[`...)
	for i, t := range turns {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"role":`...)
		out = appendString(out, t.role)
		out = append(out, `,"content":`...)
		out = appendBlocks(out, append(t.results[:len(t.results):len(t.results)], t.blocks...))
		out = append(out, '}')
	}
	out = append(out, ']')
	if len(tools) > 0 {
		out = append(out, `,"tools":`...)
		out = appendBlocks(out, tools)
		if choice.json != nil {
			out = append(out, `,"tool_choice":`...)
			out = append(out, choice.json...)
		}
	}
	if stop != nil {
		out = append(out, `,"stop_sequences":`...)
		out = append(out, stop...)
	}
	if temperature != nil {
		out = append(out, `,"temperature":`...)
		out = append(out, temperature...)
	}
	if topP != nil {
		out = append(out, `,"top_p":`...)
		out = append(out, topP...)
	}
	if topK != nil {
		out = append(out, `,"top_k":`...)
		out = append(out, topK...)
	}
	if user != nil {
		out = append(out, `,"metadata":{"user_id":`...)
		out = append(out, user...)
		out = append(out, '}')
	}
	if r.Stream {
		out = append(out, `,"stream":true`...)
	}
	out = append(out, '}')

	t := &translated{body: out, model: model, names: names, deferred: deferred != nil}
	switch {
	case deferred != nil:
		t.strategy = strategyIndex
	case len(r.Tools) > 0:
		t.strategy = strategyRemove
	}
	return t, nil
}

// strategyRemove is what this backend applies to tools sent whole: Anthropic cannot
// constrain decoding, so the model may call any tool it is sent. strategyIndex is
// what it applies when the gateway sends the catalog deferred (backends.LoadDeferred).
const (
	strategyRemove = "remove"
	strategyIndex  = "index"
)

// cacheControl is the breakpoint member. Only "ephemeral" exists; no ttl is sent, so the
// default lifetime (5 minutes, refreshed on each hit) applies.
const cacheControl = `,"cache_control":{"type":"ephemeral"}}`

func appendBlocks(out []byte, blocks []block) []byte {
	out = append(out, '[')
	for i, b := range blocks {
		if i > 0 {
			out = append(out, ',')
		}
		if b.cache {
			out = append(out, b.json[:len(b.json)-1]...)
			out = append(out, cacheControl...)
		} else {
			out = append(out, b.json...)
		}
	}
	return append(out, ']')
}

// appendString appends s as a JSON string; encoding/json's escaping is deterministic.
func appendString(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(out, b...)
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// placeBreakpoints marks at most three cache breakpoints; the Messages API takes four
// per request ("Prompt caching": cache limitations). It renders tools, then system, then
// messages, and caches the prefix up to each breakpoint:
//
//  1. the stable part: the last system block, which covers the tools too, or the last
//     tool when there is no system prompt — the last one sent whole: deferred tools are
//     not part of the prefix ("Tool use with prompt caching": a deferred tool's
//     definition is appended inline where a tool_reference loads it, so loading one
//     leaves the prefix as it was);
//  2. the end of the conversation, so the next turn, which extends it, reads it;
//  3. the end of the turn before the last assistant answer — where the previous
//     request's breakpoint 2 was — so this turn reads that entry exactly. The API looks
//     back only about 20 blocks from a breakpoint for an earlier entry, and a turn with
//     many tool results adds more than that.
//
// A prefix shorter than the model's minimum (1,024 tokens on most models; 2,048 or
// 4,096 on some Haiku and Opus models, per the same page) is silently not cached: the
// breakpoint costs nothing then, so none is left out by guessing token counts here.
func placeBreakpoints(system, tools []block, turns []*turn) {
	switch {
	case len(system) > 0:
		system[len(system)-1].cache = true
	default:
		for i := len(tools) - 1; i >= 0; i-- {
			if !tools[i].deferred {
				tools[i].cache = true
				break
			}
		}
	}
	turns[len(turns)-1].last().cache = true
	for k := len(turns) - 1; k >= 1; k-- {
		if turns[k].role == "assistant" {
			turns[k-1].last().cache = true
			break
		}
	}
}

// blank reports whether a JSON string holds nothing but white space: the Messages API
// refuses empty text blocks.
func blank(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == ""
}
