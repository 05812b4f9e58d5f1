package vllm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/masking"
)

// Backend adds a structural tag for the allowed tools to an OpenAI-compatible
// pass-through. SGLang's backend is this one with the tag placed in another field.
type Backend struct {
	inner   *openaicompat.Backend
	format  masking.Format
	place   Placement
	schemas oai.SchemaCache // the whole catalog's schemas, read once per Request.ToolsID
	// catalogs keeps each ToolsID's tools as a masking.Catalog, whose tag entries are
	// rendered (and, for a string placement, escaped) once per catalog version.
	catalogs masking.Catalogs
	known    knownTools // each ToolsID's tools array as a scan last validated it
	salts    bool       // cache_salt is vLLM's; SGLang, built on this type, has none
	// templateOrder is set once the engine's template refused a catalog-first body that
	// it took in the client's order (catalogfirst.go).
	templateOrder atomic.Bool
}

var (
	_ backends.Backend         = (*Backend)(nil)
	_ backends.ToolConstrainer = (*Backend)(nil)
	_ backends.ToolLoader      = (*Backend)(nil)
	_ backends.ModelLister     = (*Backend)(nil)
	_ backends.Pinger          = (*Backend)(nil)
	_ backends.CacheIsolator   = (*Backend)(nil)
	_ backends.EndpointPasser  = (*Backend)(nil)
)

// Placement is where an engine takes the structural tag.
type Placement struct {
	// Tag returns the member edits that carry the tag; tool_choice "auto" is added to
	// them.
	Tag func(tag []byte) ([]oai.Edit, error)
	// Conflict, when set, reports a request the tag must not go into (it stays
	// Unconstrained).
	Conflict func(*oai.Object) bool
	// String, when set, says that Tag writes one member, String.Key, as String.Prefix,
	// the tag as a JSON string (encoding/json's bytes, without HTML escaping), then
	// String.Suffix. A Backend then writes that value itself from the catalog of the
	// request's tools, whose tag entries are escaped once per catalog version, instead
	// of escaping megabytes per request; the bytes are Tag's.
	String *StringMember
	// Loads is how the engine serves strategy index (Backend.LoadsTools). The tag holds
	// Request.Definitions' tools on every engine, but only an engine whose tool parser
	// returns a call to a name outside the request's tools array as a call can serve it:
	// LoadByDefinition for vLLM, LoadNone (the zero value) otherwise.
	Loads backends.LoadKind
}

// StringMember is a member that holds the tag as a JSON string: Key's value is Prefix,
// the string, Suffix.
type StringMember struct{ Key, Prefix, Suffix string }

// StructuredOutputs is vLLM's placement: structured_outputs.structural_tag, a JSON
// string, unless the client constrains the output itself (clientConstrains: its
// response_format wins, and the request goes unconstrained).
var StructuredOutputs = Placement{Tag: func(tag []byte) ([]oai.Edit, error) {
	var so bytes.Buffer
	enc := json.NewEncoder(&so)
	enc.SetEscapeHTML(false) // keep <tool_call> readable in logs; the bytes are fixed either way
	if err := enc.Encode(struct {
		StructuralTag string `json:"structural_tag"`
	}{string(tag)}); err != nil {
		return nil, err
	}
	return []oai.Edit{{Key: "structured_outputs", Value: bytes.TrimSuffix(so.Bytes(), []byte("\n"))}}, nil
}, String: &StringMember{Key: "structured_outputs", Prefix: `{"structural_tag":`, Suffix: `}`},
	Conflict: clientConstrains, Loads: backends.LoadByDefinition}

// New returns vLLM's Backend; o is as for openaicompat (BaseURL with /v1), and o.Format
// names the model's tool-call format, which the tag must match.
func New(o openaicompat.Options) (*Backend, error) {
	o.ReportsCache = true // with --enable-prompt-tokens-details
	b, err := NewPlaced(o, StructuredOutputs)
	if b != nil {
		b.salts = true
	}
	return b, err
}

// NewPlaced returns a Backend that puts the tag where p says.
func NewPlaced(o openaicompat.Options, p Placement) (*Backend, error) {
	f, err := FormatOf(o.Format)
	if err != nil {
		return nil, err
	}
	inner, err := openaicompat.New(o)
	if err != nil {
		return nil, err
	}
	return &Backend{inner: inner, format: f, place: p}, nil
}

// FormatOf resolves a configured format name; empty is Hermes.
func FormatOf(name string) (masking.Format, error) {
	if name == "" {
		return masking.Hermes(), nil
	}
	f, ok := masking.FormatByName(name)
	if !ok {
		return masking.Format{}, fmt.Errorf("unknown tool-call format %q (one of %v)", name, masking.FormatNames())
	}
	return f, nil
}

// ConstrainsTools: the structural tag enforces Request.Allowed.
func (b *Backend) ConstrainsTools() bool { return true }

// LoadsTools is the placement's Loads. On vLLM, LoadByDefinition: the structural tag
// holds a call to a tool of Request.Definitions to its schema as it holds Body's tools,
// the engine renders Body's tools only, and its tool parsers (hermes_tool_parser.py's
// extract_tool_calls among them) return a call whatever its name.
func (b *Backend) LoadsTools() backends.LoadKind { return b.place.Loads }

func (b *Backend) ListModels(ctx context.Context) ([]string, error) { return b.inner.ListModels(ctx) }

func (b *Backend) Ping(ctx context.Context) error { return b.inner.Ping(ctx) }

// IsolatesCache: vLLM takes a cache_salt (vLLM docs, "Automatic Prefix Caching",
// cache isolation): blocks are hashed with the salt, so requests under different salts
// share no cached prefix.
func (b *Backend) IsolatesCache() bool { return b.salts }

// ChatCompletion adds the constraint when the request has tools, then forwards. The
// strategy it reports is mask when the tag carried the gateway's allowed set, validate
// when it could not go out; without an allowed set the gateway's label stands.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	in := req.Body
	if req.CacheSalt != "" && b.salts {
		// The gateway's salt replaces any the client sent: an isolated caller's cache is
		// its identity's, not what its requests name.
		var err error
		if in, err = oai.Set(in, "cache_salt", []byte(strconv.Quote(req.CacheSalt))); err != nil {
			return nil, err
		}
	}
	if moved := b.catalogFirst(in, req); len(moved) != len(in) { // catalogfirst.go
		return b.catalogFirstOrNot(ctx, req, moved, in)
	}
	return b.chat(ctx, req, in)
}

// chat constrains in (the request's body with the backend's own edits) and sends it.
func (b *Backend) chat(ctx context.Context, req *backends.Request, in []byte) (*backends.Response, error) {
	body, outcome, err := b.constrain(in, req)
	if err != nil {
		return nil, err
	}
	if body, err = continueFinal(body); err != nil { // prefill.go
		return nil, err
	}
	out := *req
	out.Body = body
	resp, err := b.inner.ChatCompletion(ctx, &out)
	if err == nil {
		if st := strategyFor(req.Allowed, outcome); st != "" {
			resp.Strategy = st
		}
	}
	return resp, err
}

// PassesEndpoint: vLLM and SGLang serve embeddings, completions, rerank and score
// (each for the models that do it; the engine refuses the others itself).
func (b *Backend) PassesEndpoint(endpoint string) bool { return b.inner.PassesEndpoint(endpoint) }

// PassEndpoint forwards req to the endpoint; a legacy completion of a caller whose cache
// is isolated carries its cache_salt, as a chat completion does.
func (b *Backend) PassEndpoint(ctx context.Context, endpoint string, req *backends.Request) (*backends.Response, error) {
	if req.CacheSalt != "" && b.salts && endpoint == backends.EndpointCompletions {
		body, err := oai.Set(req.Body, "cache_salt", []byte(strconv.Quote(req.CacheSalt)))
		if err != nil {
			return nil, err
		}
		out := *req
		out.Body = body
		req = &out
	}
	return b.inner.PassEndpoint(ctx, endpoint, req)
}

// Constrain returns body with the structural tag for allowed (nil: every tool of the
// request), in the Hermes format, and tool_choice "auto", or body unchanged when it has no
// tools, its tool_choice is "none", or the client constrains the output itself
// (clientConstrains). It edits only those two members.
func Constrain(body []byte, allowed []string) ([]byte, bool, error) {
	out, o, err := Place(body, allowed, masking.Hermes(), StructuredOutputs, oai.ToolSchemas)
	return out, o == Constrained, err
}

// constrain is Place for body with req's allowed set. Tools that carry a ToolsID are
// read once: their schemas (b.schemas) and their catalog (b.catalogs), from whose
// pieces the tag is copied into a pooled buffer, since at 10,000 tools it is megabytes
// that are dropped once the body is written.
func (b *Backend) constrain(body []byte, req *backends.Request) ([]byte, Outcome, error) {
	schemas := func(raw []byte) ([]oai.ToolSchema, error) { return b.schemas.Get(req.ToolsID, raw) }
	defs, err := definitions(req.Definitions)
	if err != nil {
		return nil, Untouched, err
	}
	if len(defs) > 0 {
		// Strategy index: the tag is rendered for this request from Body's tools (their
		// schemas still read once per ToolsID) and the loaded tools' definitions, which
		// change per request and so stay out of every cache kept under the ToolsID.
		withDefs := func(raw []byte) ([]oai.ToolSchema, error) {
			ts, err := schemas(raw)
			if err != nil {
				return nil, err
			}
			return slices.Concat(ts, defs), nil
		}
		return Place(body, req.Allowed, b.format, b.place, withDefs)
	}
	if req.ToolsID == "" {
		return Place(body, req.Allowed, b.format, b.place, schemas)
	}
	buf := tagBufs.Get().(*[]byte)
	defer tagBufs.Put(buf)
	ct := &catalogTag{known: b.known.scope(req.ToolsID), catalog: func(tools []oai.ToolSchema) *masking.Catalog {
		// In the tools' order, so a tag of the whole catalog is one copy.
		cat, _ := b.catalogs.GetInOrder(req.ToolsID, func() ([]string, map[string]json.RawMessage, error) {
			names := make([]string, len(tools))
			params := make(map[string]json.RawMessage, len(tools))
			for i, tl := range tools {
				names[i] = tl.Name
				params[tl.Name] = tl.Parameters // the last of a repeated name, as Place
			}
			return names, params, nil
		})
		return cat // read cannot fail
	}}
	sm := b.place.String
	if sm != nil {
		ct.dst, ct.str = append((*buf)[:0], sm.Prefix...), true
	} else {
		ct.dst = (*buf)[:0]
	}
	t, err := buildTag(body, req.Allowed, b.format, schemas, b.place.Conflict, ct)
	if err != nil || t.Outcome != Constrained {
		return body, t.Outcome, err
	}
	var edits []oai.Edit
	if sm != nil && !t.Answer { // a combined tag comes whole, not in the catalog's string form
		*buf = append(t.Tag, sm.Suffix...)
		edits = []oai.Edit{{Key: sm.Key, Value: *buf}}
	} else {
		*buf = t.Tag
		if edits, err = b.place.Tag(t.Tag); err != nil {
			return nil, Untouched, err
		}
	}
	edits = answerEdit(edits, t)
	return t.Object.Edit(append(edits, oai.Edit{Key: "tool_choice", Value: []byte(`"auto"`)})...), Constrained, nil
}

// definitions reads Request.Definitions' names and schemas; a tools array that does not
// parse is the gateway's fault, not the client's, so it is no 400.
func definitions(raw []byte) ([]oai.ToolSchema, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	defs, err := oai.ToolSchemas(raw)
	if err != nil {
		return nil, fmt.Errorf("request definitions: %w", err)
	}
	return defs, nil
}

// tagBufs holds the buffers tags are written into: with the catalog's pieces, writing a
// tag into a warm buffer is one memory copy, and a fresh one would fault in its pages.
var tagBufs = sync.Pool{New: func() any { return new([]byte) }}

// Place builds the tag for body (BuildTag) and puts it where p says, with tool_choice
// "auto"; a body that gets no tag comes back unchanged.
func Place(body []byte, allowed []string, format masking.Format, p Placement, schemas SchemaFunc) ([]byte, Outcome, error) {
	t, err := BuildTag(body, allowed, format, schemas, p.Conflict)
	if err != nil || t.Outcome != Constrained {
		return body, t.Outcome, err
	}
	edits, err := p.Tag(t.Tag)
	if err != nil {
		return nil, Untouched, err
	}
	edits = answerEdit(edits, t)
	return t.Object.Edit(append(edits, oai.Edit{Key: "tool_choice", Value: []byte(`"auto"`)})...), Constrained, nil
}

// knownTools remembers the tools array of the last few ToolsIDs, as a scan validated it:
// the gateway sends the same whole-catalog array, byte for byte, with every request of a
// catalog version, and scanning its 300 KB (500 tools) again was a third of the
// backend's work on a managed mask request. A request's bytes are still compared with
// the remembered ones in full (memcmp speed), so a body whose array differs is scanned.
type knownTools struct {
	mu      sync.Mutex
	entries []knownArray // most recent last, at most maxKnownArrays
}

type knownArray struct {
	id    string
	raw   []byte
	elems int
}

// maxKnownArrays bounds the arrays kept: one per catalog version and strategy in use.
const maxKnownArrays = 8

// scope is the oai.Known of requests whose tools carry id.
func (k *knownTools) scope(id string) oai.Known { return knownScope{k, id} }

type knownScope struct {
	k  *knownTools
	id string
}

func (s knownScope) Match(b []byte) (int, int, bool) {
	// An entry's bytes never change once kept: compare them outside the lock, so that
	// concurrent requests do not queue behind one another's 300 KB memcmp.
	s.k.mu.Lock()
	var e knownArray
	for _, c := range s.k.entries {
		if c.id == s.id {
			e = c
			break
		}
	}
	s.k.mu.Unlock()
	if e.raw != nil && bytes.HasPrefix(b, e.raw) {
		return len(e.raw), e.elems, true
	}
	return 0, 0, false
}

func (s knownScope) Remember(v []byte, elems int) {
	k := s.k
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, e := range k.entries {
		if e.id == s.id {
			k.entries = append(k.entries[:i], k.entries[i+1:]...)
			break
		}
	}
	if len(k.entries) == maxKnownArrays {
		k.entries = append(k.entries[:0], k.entries[1:]...)
	}
	k.entries = append(k.entries, knownArray{id: s.id, raw: bytes.Clone(v), elems: elems})
}
