package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/masking"
)

// TargetInfo says what answered and what its figures are worth.
type TargetInfo struct {
	Name string `json:"name"`
	// Kind is the backend kind the gateway was told (Upstream.Kind).
	Kind string `json:"kind"`
	// Model is the model name requests carry.
	Model string `json:"model"`
	// Tokens says where token counts come from; Times what the seconds are.
	Tokens string `json:"tokens"`
	Times  string `json:"times"`
	// TimesCount is false where the seconds say nothing about a real deployment.
	TimesCount bool `json:"times_count"`
}

// target is what answers the gateway in one replay.
type target interface {
	info() TargetInfo
	// backend is the engine for one run (a catalog, scenario and strategy), with the log
	// its rounds go to. A target that can start cold does so for every run; the others
	// rely on the run's own system prompt to share nothing with earlier runs.
	backend() (backends.Backend, *roundLog)
	// engine is what the auto strategy's cost model is told the backend can do.
	engine() kvcache.Engine
	close() error
}

// modelTarget is the prefix model: a fresh block cache for every run.
type modelTarget struct {
	render        *renderer
	model         workload.Model
	blockSize     int
	unconstrained bool
	context       int // the window auto is told; 0 none
}

func newModelTarget(c Config) (*modelTarget, error) {
	r, err := newRenderer()
	if err != nil {
		return nil, err
	}
	return &modelTarget{render: r, model: workload.Model{Stray: c.Stray}, blockSize: c.BlockSize, unconstrained: c.Unconstrained, context: c.Context}, nil
}

func (t *modelTarget) info() TargetInfo {
	constraint := "an engine that enforces the allowed set (vLLM with a structural tag)"
	if t.unconstrained {
		constraint = "an engine that cannot enforce an allowed set"
	}
	return TargetInfo{
		Name: "prefix model", Kind: "model", Model: "replay",
		Tokens: fmt.Sprintf("o200k_base tokens of a ChatML-style render; cached = kvcache.BlockCache (block %d, vLLM-style) of %s", t.blockSize, constraint),
		Times: "modelled by kvcache.DefaultPrefill and DefaultDecode (one H200, 8B model); " +
			"no engine ran", TimesCount: false,
	}
}

func (t *modelTarget) backend() (backends.Backend, *roundLog) {
	log := newRoundLog()
	return &prefixEngine{
		render: t.render, model: t.model, constrains: !t.unconstrained, log: log,
		cache:   kvcache.NewBlockCache(kvcache.BlockOptions{BlockSize: t.blockSize}),
		prefill: kvcache.DefaultPrefill(), decode: kvcache.DefaultDecode(),
	}, log
}

func (t *modelTarget) engine() kvcache.Engine {
	return kvcache.Engine{Capabilities: kvcache.Capabilities{Constrains: !t.unconstrained, AllowedTools: true, CachesPrefixes: true, Index: !t.unconstrained},
		ContextTokens: t.context}
}

func (t *modelTarget) close() error { return nil }

// engineTarget is a real engine behind the scripted model; one engine for every run.
type engineTarget struct {
	about   TargetInfo
	caps    kvcache.Capabilities
	scr     *scriptedEngine
	closeFn func() error
}

func (t *engineTarget) info() TargetInfo { return t.about }

func (t *engineTarget) backend() (backends.Backend, *roundLog) { return t.scr, t.scr.log }

func (t *engineTarget) engine() kvcache.Engine { return kvcache.Engine{Capabilities: t.caps} }

func (t *engineTarget) close() error {
	if t.closeFn != nil {
		return t.closeFn()
	}
	return nil
}

func scripted(inner backends.Backend, c Config) *scriptedEngine {
	return &scriptedEngine{inner: inner, model: workload.Model{Stray: c.Stray}, gen: c.Gen, log: newRoundLog(), now: time.Now}
}

// newURLTarget reaches a running engine through the repository's backend for its kind,
// configured as cmd/gateway configures it.
func newURLTarget(c Config) (*engineTarget, error) {
	transport := &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}
	var be backends.Backend
	var err error
	switch c.Kind {
	case "vllm":
		be, err = vllm.New(openaicompat.Options{Name: "replay", BaseURL: c.URL, APIKey: c.APIKey, Transport: transport})
	case "openai", "sglang":
		be, err = openaicompat.New(openaicompat.Options{Name: "replay", BaseURL: c.URL, APIKey: c.APIKey, Transport: transport, ReportsCache: true})
	case "llamacpp":
		be, err = llamacpp.New(llamacpp.Options{Name: "replay", BaseURL: c.URL, Transport: transport, Grammar: hermesGrammar()})
	case "ollama":
		be, err = ollama.New(ollama.Options{Name: "replay", BaseURL: c.URL, Transport: transport})
	}
	if err != nil {
		return nil, fmt.Errorf("-kind %s -url %s: %w", c.Kind, c.URL, err)
	}
	if p, ok := be.(backends.Pinger); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			return nil, fmt.Errorf("-url %s does not answer: %w", c.URL, err)
		}
	}
	return &engineTarget{
		about: TargetInfo{Name: c.Kind + " at " + c.URL, Kind: c.Kind, Model: c.Model,
			Tokens: "the engine's own usage (prompt_tokens, cached_tokens); Ollama's cached tokens are the gateway's estimate",
			Times:  "measured at the gateway's backend call: time to the first streamed chunk, then decode", TimesCount: true},
		caps:    urlCapabilities(c.Kind, be),
		scr:     scripted(be, c),
		closeFn: func() error { transport.CloseIdleConnections(); return nil },
	}, nil
}

// urlCapabilities is what each kind of backend can do, as the gateway's backends do it:
// llama-server and vLLM constrain (a grammar, a structural tag), OpenAI honours
// allowed_tools, and every engine but a hosted API reuses cached prefixes it holds. Index
// is the backend's own answer (backends.ToolLoader), as cmd/gateway asks it.
func urlCapabilities(kind string, be backends.Backend) kvcache.Capabilities {
	var c kvcache.Capabilities
	switch kind {
	case "llamacpp", "vllm":
		c = kvcache.Capabilities{Constrains: true, CachesPrefixes: true}
	case "openai":
		c = kvcache.Capabilities{AllowedTools: true, CachesPrefixes: true}
	default:
		c = kvcache.Capabilities{CachesPrefixes: true}
	}
	l, ok := be.(backends.ToolLoader)
	c.Index = ok && l.LoadsTools() != backends.LoadNone
	return c
}

// hermesGrammar is cmd/gateway's grammar hook for llama-server: a lazy GBNF grammar that
// starts at <tool_call> and then allows only the allowed names, each with its arguments
// rule from the request's tools array (catalogs kept per ToolsID) or, under strategy
// index, from Request.Definitions (a catalog for the request alone; an allowed name in
// neither is not callable).
func hermesGrammar() llamacpp.GrammarFunc {
	var catalogs masking.Catalogs
	return func(r llamacpp.GrammarRequest) (json.RawMessage, error) {
		spec := masking.Spec{Format: masking.Hermes(), Allowed: r.Allowed, Mode: masking.ModeAuto, OneCall: r.OneCall}
		if r.Required {
			spec.Mode = masking.ModeRequired
		}
		defs, err := toolParams(r.Definitions)
		if err != nil {
			return nil, fmt.Errorf("definitions: %w", err)
		}
		var cat *masking.Catalog
		if len(defs) == 0 {
			cat, err = catalogs.Get(r.ToolsID, func() (map[string]json.RawMessage, error) { return toolParams(r.Tools) })
		} else {
			var params map[string]json.RawMessage
			if params, err = toolParams(r.Tools); err == nil {
				if params == nil {
					params = map[string]json.RawMessage{}
				}
				for name, p := range defs {
					if _, ok := params[name]; !ok {
						params[name] = p
					}
				}
				cat = masking.NewCatalog(params)
				spec.Allowed = slices.DeleteFunc(slices.Clone(spec.Allowed), func(n string) bool { return !cat.Has(n) })
			}
		}
		if err != nil {
			return nil, err
		}
		g, err := cat.GBNF(spec)
		if err != nil {
			return nil, err
		}
		return json.Marshal(g)
	}
}

// toolParams reads each tool's parameters out of a tools array, by name.
func toolParams(tools []byte) (map[string]json.RawMessage, error) {
	if len(tools) == 0 || string(tools) == "null" {
		return nil, nil
	}
	ts, err := oai.ToolSchemas(tools)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	params := make(map[string]json.RawMessage, len(ts))
	for _, t := range ts {
		params[t.Name] = t.Parameters
	}
	return params, nil
}

func newTarget(c Config) (target, error) {
	switch c.Target {
	case TargetEmbedded:
		return newEmbeddedTarget(c)
	case TargetURL:
		return newURLTarget(c)
	}
	return newModelTarget(c)
}
