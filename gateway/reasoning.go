package gateway

import (
	"bytes"
	"encoding/json"
	"sync/atomic"

	"github.com/maskgate/maskgate/backends/oai"
)

// reasoningName is the member under which one upstream reads an assistant message's
// reasoning in the history a request sends back: vLLM renamed reasoning_content to
// reasoning (0.11) and then dropped the old name (0.13), while llama-server and SGLang
// read reasoning_content. The doors write reasoning_content; a client may send either.
// A configured name (Upstream.ReasoningField) is kept; else the name the upstream's own
// answers last used; else the kind's: reasoning for vllm, reasoning_content otherwise.
type reasoningName struct {
	fixed string       // configured, or "" to detect
	kind  string       // the default before any answer said
	seen  atomic.Int32 // 0: no answer has carried reasoning; 1: reasoning_content; 2: reasoning
}

func newReasoningName(up *Upstream) *reasoningName {
	r := &reasoningName{fixed: up.ReasoningField, kind: oai.ReasoningContent}
	if up.Kind == "vllm" {
		r.kind = oai.Reasoning
	}
	return r
}

// saw records the name an answer's reasoning came under (reasoning when named, else
// reasoning_content). A nil r (no upstream yet) records nothing.
func (r *reasoningName) saw(named bool) {
	if r == nil {
		return
	}
	v := int32(1)
	if named {
		v = 2
	}
	if r.seen.Load() != v {
		r.seen.Store(v)
	}
}

// name is the member the upstream reads.
func (r *reasoningName) name() string {
	switch {
	case r.fixed != "":
		return r.fixed
	case r.seen.Load() == 1:
		return oai.ReasoningContent
	case r.seen.Load() == 2:
		return oai.Reasoning
	}
	return r.kind
}

// rewrite returns body with each message's reasoning under the upstream's name: the key
// alone is rewritten, nothing else moves. It returns body itself, uncopied, when there
// is nothing to rename (the common case: no reasoning in the history) or when body is
// not a chat request it can read (the upstream answers for that).
func (r *reasoningName) rewrite(body []byte) []byte {
	if r == nil {
		return body
	}
	to := r.name()
	from := oai.ReasoningContent
	if to == oai.ReasoningContent {
		from = oai.Reasoning
	}
	return renameReasoning(body, from, to)
}

// mentionsReasoning reports whether any message holds the bytes of a reasoning key
// ("reasoning" or "reasoning_content"): only then can a body need rewrite.
func mentionsReasoning(msgs []json.RawMessage) bool {
	for _, m := range msgs {
		if bytes.Contains(m, []byte(`"`+oai.Reasoning)) {
			return true
		}
	}
	return false
}

// renameReasoning renames the member from to to in every object of body's messages
// array that has from and not to. Offsets come from the scanner's slices of body.
func renameReasoning(body []byte, from, to string) []byte {
	if !bytes.Contains(body, []byte(`"`+from+`"`)) {
		return body
	}
	msgs, ok := oai.Get(body, "messages")
	if !ok {
		return body
	}
	var at []int // offsets in body of each key to rename (its first byte, inside the quotes)
	_ = oai.Elements(msgs, func(m []byte) error {
		o, err := oai.ParseObject(m)
		if err != nil {
			return nil
		}
		key, has := -1, false
		o.Each(func(k, _ []byte) bool {
			switch string(k) {
			case from:
				key = cap(body) - cap(k)
			case to:
				has = true
			}
			return true
		})
		if key >= 0 && !has {
			at = append(at, key)
		}
		return nil
	})
	if len(at) == 0 {
		return body
	}
	out := make([]byte, 0, len(body)+len(at)*(len(to)-len(from)))
	prev := 0
	for _, k := range at {
		out = append(out, body[prev:k]...)
		out = append(out, to...)
		prev = k + len(from)
	}
	return append(out, body[prev:]...)
}
