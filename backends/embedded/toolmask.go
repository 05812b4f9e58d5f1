//go:build llamacpp

package embedded

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/masking"
)

var _ backends.ToolConstrainer = (*Backend)(nil)

// toolMasks builds the model's vocabulary index once (about 0.1 s and 50 MB for a 128k
// vocabulary, so only when a request first has tools) and caches compiled masks per
// (format, allowed set, mode).
type toolMasks struct {
	once  sync.Once
	index *masking.Index
	err   error
	cache masking.Cache
}

func (b *Backend) maskIndex() (*masking.Index, error) {
	b.masks.once.Do(func() {
		n := b.model.NumVocab()
		pieces := make([][]byte, n)
		for id := range n {
			pieces[id] = []byte(b.model.TokenToPiece(id))
		}
		b.masks.index, b.masks.err = masking.NewIndex(masking.SliceVocab{Pieces: pieces})
	})
	return b.masks.index, b.masks.err
}

// maskFor is the constraint for a request with tools: tool calls may name only the
// allowed tools — the gateway's Allowed when it sent the whole catalog (strategy mask),
// else the request's own tools — in the mode its tool_choice asks for. Nil when the
// request has no tools or tool_choice is "none".
func (b *Backend) maskFor(req *backends.Request, r *request) (Masker, error) {
	if len(r.chat.Tools) == 0 || !r.tools {
		return nil, nil
	}
	spec := masking.Spec{Format: masking.Hermes(), Mode: masking.ModeAuto}
	if req.Allowed != nil {
		spec.Allowed = req.Allowed
	} else {
		for _, t := range r.chat.Tools {
			spec.Allowed = append(spec.Allowed, t.Function.Name)
		}
	}
	mode, named, err := parseChoice(r.chat.ToolChoice)
	if err != nil {
		return nil, err
	}
	spec.Mode = mode
	if named != nil {
		spec.Allowed = intersect(spec.Allowed, named)
		if len(spec.Allowed) == 0 {
			return nil, badRequest("tool_choice", "tool_choice names no tool the model may call")
		}
	}
	ix, err := b.maskIndex()
	if err != nil {
		return nil, fmt.Errorf("embedded: vocabulary index: %w", err)
	}
	m, err := b.masks.cache.Get(ix, spec)
	if err != nil {
		return nil, badRequest("tools", err.Error())
	}
	st := m.NewState()
	return &maskState{st: &st, bits: masking.NewBitset(b.model.NumVocab())}, nil
}

// parseChoice maps tool_choice onto a masking mode and, for a named function or
// allowed_tools, the names it narrows to.
func parseChoice(raw json.RawMessage) (masking.Mode, []string, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `"auto"` {
		return masking.ModeAuto, nil, nil
	}
	if string(raw) == `"required"` {
		return masking.ModeRequired, nil, nil
	}
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return 0, nil, badRequest("tool_choice", `tool_choice must be "auto", "required", "none" or an object`)
	}
	switch c.Type {
	case "function":
		return masking.ModeRequired, []string{c.Function.Name}, nil
	case "allowed_tools":
		var names []string
		for _, t := range c.AllowedTools.Tools {
			names = append(names, t.Function.Name)
		}
		if c.AllowedTools.Mode == "required" {
			return masking.ModeRequired, names, nil
		}
		return masking.ModeAuto, names, nil
	}
	return 0, nil, badRequest("tool_choice", "unknown tool_choice type "+c.Type)
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// maskState adapts a masking.State to the engine's Masker.
type maskState struct {
	st   *masking.State
	bits *masking.Bitset
}

func (m *maskState) Allowed(dst []uint64) bool {
	set := m.st.Allowed()
	if set.All() {
		return false
	}
	set.CopyTo(m.bits)
	copy(dst, m.bits.Words())
	return true
}

func (m *maskState) Accept(token int) error { return m.st.Accept(token) }
