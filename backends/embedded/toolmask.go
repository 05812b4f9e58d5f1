//go:build llamacpp

package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

var (
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ToolLoader      = (*Backend)(nil)
)

// LoadsTools: where the engine constrains calls (ConstrainsTools) it serves strategy
// index by definition: the call grammar holds a call to a tool of Request.Definitions
// to its schema (toolCatalog), while the chat template renders Body's tools only.
func (b *Backend) LoadsTools() backends.LoadKind {
	if !b.format.constrains {
		return backends.LoadNone
	}
	return backends.LoadByDefinition
}

// toolMasks builds the model's vocabulary index and the grammar sampler's view of it
// once (about 0.1 s and 50 MB for a 128k vocabulary, so only when a request first has
// tools), caches compiled masks per (format, allowed set, mode), and keeps the catalogs
// of the tools arrays it saw per ToolsID, so each tool's arguments grammar is rendered
// once; each such catalog is precompiled in the mask cache, so later masks of its tools
// are derived rather than compiled.
type toolMasks struct {
	once     sync.Once
	index    *masking.Index
	gv       *grammarVocab
	pieces   []string
	err      error
	cache    masking.Cache
	catalogs masking.Catalogs
}

func (b *Backend) maskIndex() (*masking.Index, error) {
	b.masks.once.Do(func() {
		n := b.model.NumVocab()
		pieces := make([][]byte, n)
		b.masks.pieces = make([]string, n)
		for id := range n {
			b.masks.pieces[id] = b.model.TokenToPiece(id)
			pieces[id] = []byte(b.masks.pieces[id])
		}
		b.masks.index, b.masks.err = masking.NewIndex(masking.SliceVocab{Pieces: pieces})
		b.masks.gv = newGrammarVocab(b.masks.pieces, b.model.TokenIsEog)
	})
	return b.masks.index, b.masks.err
}

// toolMask is the constraint for a request with tools: tool calls may name only the
// allowed tools — the gateway's Allowed when it sent the whole catalog (strategy mask),
// else the request's own tools — in the mode its tool_choice asks for. Nil when the
// request has no tools or tool_choice is "none".
func (b *Backend) toolMask(req *backends.Request, r *request) (Masker, error) {
	if len(r.chat.Tools) == 0 || !r.tools {
		return nil, nil
	}
	if !b.format.constrains {
		return nil, nil
	}
	spec, err := toolSpec(req, r, b.format.mask)
	if err != nil {
		return nil, err
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
	cat, err := b.toolCatalog(req, r, ix)
	if err != nil {
		return nil, err
	}
	grammar, err := cat.CallGBNF(spec)
	if errors.Is(err, masking.ErrNoCallAllowed) {
		// No call can start: the mask alone keeps the trigger out.
		return &maskState{st: &st, bits: masking.NewBitset(b.model.NumVocab())}, nil
	}
	if err != nil {
		return nil, badRequest("tools", err.Error())
	}
	return newCallMasker(st, spec, b.masks.gv, grammar, b.model.NumVocab(), func(id int) string { return b.masks.pieces[id] }), nil
}

// toolSpec is what a request with tools may call: the gateway's Allowed when it sent
// the whole catalog (strategy mask), else the request's own tools, narrowed and moded
// by its tool_choice.
func toolSpec(req *backends.Request, r *request, f masking.Format) (masking.Spec, error) {
	spec := masking.Spec{Format: f, Mode: masking.ModeAuto}
	if req.Allowed != nil {
		spec.Allowed = req.Allowed
	} else {
		for _, t := range r.chat.Tools {
			spec.Allowed = append(spec.Allowed, t.Function.Name)
		}
	}
	if len(req.Definitions) > 0 && req.Allowed != nil {
		// Under index a name in neither the tools nor the definitions has no schema the
		// model was shown: it is not callable (the call grammar would admit it with any
		// object).
		defs, err := oai.ToolSchemas(req.Definitions)
		if err != nil {
			return spec, fmt.Errorf("embedded: request definitions: %w", err)
		}
		known := make(map[string]bool, len(r.chat.Tools)+len(defs))
		for _, t := range r.chat.Tools {
			known[t.Function.Name] = true
		}
		for _, d := range defs {
			known[d.Name] = true
		}
		spec.Allowed = slices.DeleteFunc(slices.Clone(spec.Allowed), func(n string) bool { return !known[n] })
	}
	mode, named, _, err := masking.ParseToolChoice(r.chat.ToolChoice)
	if err != nil {
		return spec, badRequest("tool_choice", err.Error())
	}
	spec.Mode = mode
	spec.OneCall = r.chat.ParallelToolCalls != nil && !*r.chat.ParallelToolCalls
	if named != nil {
		if spec.Allowed = masking.Narrow(spec.Allowed, named); len(spec.Allowed) == 0 {
			return spec, badRequest("tool_choice", "tool_choice names no tool the model may call")
		}
	}
	return spec, nil
}

// toolCatalog is the catalog of the request's tools array, kept per ToolsID so each
// tool's arguments grammar is rendered once. Under strategy index, when
// Request.Definitions holds tools, it is built for this request alone from the tools
// array and the definitions together (a name in both keeps the array's schema): the
// definitions change per request, so no catalog kept under the ToolsID takes them in.
// They are a few loaded tools beside the meta-tools, read in microseconds.
func (b *Backend) toolCatalog(req *backends.Request, r *request, ix *masking.Index) (*masking.Catalog, error) {
	if len(req.Definitions) > 0 {
		defs, err := oai.ToolSchemas(req.Definitions)
		if err != nil {
			return nil, fmt.Errorf("embedded: request definitions: %w", err)
		}
		if len(defs) > 0 {
			params := make(map[string]json.RawMessage, len(r.chat.Tools)+len(defs))
			for _, d := range defs {
				params[d.Name] = d.Parameters
			}
			for _, t := range r.chat.Tools {
				params[t.Function.Name] = t.Function.Parameters
			}
			return masking.NewCatalog(params), nil
		}
	}
	return b.masks.catalogs.Get(req.ToolsID, func() (map[string]json.RawMessage, error) {
		params := make(map[string]json.RawMessage, len(r.chat.Tools))
		names := make([]string, 0, len(r.chat.Tools))
		for _, t := range r.chat.Tools {
			params[t.Function.Name] = t.Function.Parameters
			names = append(names, t.Function.Name)
		}
		if req.ToolsID != "" {
			// A new catalog version: precompiled once, later loaded sets of it are
			// derived rather than compiled (about 1 ms instead of 15 at 10,000 tools). In
			// the background, since this request has its mask; a catalog that does not
			// compile is left to Get.
			go b.masks.cache.Precompile(ix, masking.Spec{Format: b.format.mask, Allowed: names})
		}
		return params, nil
	})
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
