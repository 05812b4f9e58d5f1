package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/masking"
)

// grammarFor renders the loaded set as llama-server's grammar fields for one wire
// format: a lazy GBNF grammar that starts at the format's trigger and then allows only
// the allowed names, each with its own arguments rule from the tool's JSON Schema in the
// request's tools array or, under strategy index, its Definitions. The schemas of a
// tools array that has a ToolsID (the gateway's whole catalog under mask) are read and
// rendered once per ID, in a cache private to the backend (requestCatalog).
//
// When no call may start at all (nothing allowed, mode auto), no grammar can say so; the
// trigger is banned with logit_bias instead, which is exact only where the trigger is one
// special token of the model (Hermes' <tool_call>, Mistral's [TOOL_CALLS], DeepSeek's
// call marker) — llama-server would otherwise ban every token of the text, the naive
// bias that also bans ordinary text. For the other formats nothing is sent and the
// gateway's own check answers any call.
//
// A request with a structured output (GrammarRequest.Answer) whose calls are optional
// gets one non-lazy grammar whose root is the allowed calls or the answer; a required
// call ignores the answer (only calls may come).
func grammarFor(f masking.Format) llamacpp.GrammarFunc {
	var catalogs masking.Catalogs
	return func(r llamacpp.GrammarRequest) (json.RawMessage, error) {
		spec := masking.Spec{Format: f, Allowed: r.Allowed, Mode: masking.ModeAuto, OneCall: r.OneCall}
		if r.Required {
			spec.Mode = masking.ModeRequired
		}
		cat, err := requestCatalog(&catalogs, r)
		if err != nil {
			return nil, err
		}
		if len(r.Definitions) > 0 {
			// Under index a name in neither the tools nor the definitions has no schema
			// the model was shown: it is not callable (masking would admit it with any
			// object).
			spec.Allowed = slices.DeleteFunc(slices.Clone(spec.Allowed), func(n string) bool { return !cat.Has(n) })
		}
		if r.Answer != nil && !r.Required {
			// A structured output beside calls: an allowed call or the answer, one
			// grammar from the first token (with no call allowed, the answer alone).
			g, err := cat.GBNFOrAnswer(spec, r.Answer)
			if err != nil {
				return nil, err
			}
			return json.Marshal(g)
		}
		g, err := cat.GBNF(spec)
		if errors.Is(err, masking.ErrNoCallAllowed) {
			if !triggerIsToken[f.Name] {
				return nil, nil
			}
			ban, err := json.Marshal([][]any{{f.Trigger, false}})
			if err != nil {
				return nil, err
			}
			return json.RawMessage(`{"logit_bias":` + string(ban) + `}`), nil
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(g)
	}
}

// requestCatalog is the catalog of the request's tools: Tools' catalog, kept per
// ToolsID, or, when Definitions (strategy index) hold tools, one built for this request
// alone from Tools and Definitions together (a name in both keeps Tools' schema), so
// that a loaded tool's arguments follow its schema and no ToolsID's catalog ever holds
// another request's definitions. Under index Tools are the meta-tools and the client's
// own, and Definitions the few loaded tools: reading them per request is cheap.
func requestCatalog(catalogs *masking.Catalogs, r llamacpp.GrammarRequest) (*masking.Catalog, error) {
	defs, err := toolParams(r.Definitions)
	if err != nil {
		return nil, fmt.Errorf("definitions: %w", err)
	}
	if len(defs) == 0 {
		return catalogs.Get(r.ToolsID, func() (map[string]json.RawMessage, error) { return toolParams(r.Tools) })
	}
	params, err := toolParams(r.Tools)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = make(map[string]json.RawMessage, len(defs))
	}
	for name, p := range defs {
		if _, ok := params[name]; !ok {
			params[name] = p
		}
	}
	return masking.NewCatalog(params), nil
}

// toolParams reads each tool's parameters out of a tools array, as the client wrote them.
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

// triggerIsToken: the formats whose call trigger is one special token in their models.
var triggerIsToken = map[string]bool{"hermes": true, "mistral": true, "deepseek": true}

// templateTimeout bounds reading llama-server's chat template at start.
const templateTimeout = 3 * time.Second

// newLlamaCpp builds the llama-server backend in the wire format b names or, when it
// names none, the one its chat template shows. A template whose calls no constraint
// can express leaves the backend unconstrained (the gateway then uses remove), and
// says so once, here. A server that does not answer yet is taken to speak Hermes.
func newLlamaCpp(b config.Backend, transport http.RoundTripper, log *slog.Logger) (backends.Backend, error) {
	opt := llamacpp.Options{Name: b.Name, BaseURL: b.URL, Transport: transport, Timeout: time.Duration(b.Timeout),
		IdleTimeout: time.Duration(b.IdleTimeout), MaxResponseBytes: int64(b.MaxResponseBytes), MaxEventBytes: int(b.MaxEventBytes), Format: b.Format}
	if b.Format != "" {
		f, _ := masking.FormatByName(b.Format) // config validated the name
		opt.Grammar = grammarFor(f)
		return llamacpp.New(opt)
	}
	probe, err := llamacpp.New(opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), templateTimeout)
	defer cancel()
	tmpl, err := probe.ChatTemplate(ctx)
	if err != nil {
		log.Warn("llama-server chat template not readable; assuming the hermes tool-call format (set format: to choose)", "backend", b.Name, "error", err)
		opt.Format, opt.Grammar = toolcall.Hermes, grammarFor(masking.Hermes())
		return llamacpp.New(opt)
	}
	if name, ok := toolcall.Detect(tmpl); ok {
		opt.Format = name
	}
	if f, ok := masking.DetectFormat(tmpl); ok {
		opt.Format, opt.Grammar = f.Name, grammarFor(f)
		log.Info("llama-server tool-call format detected", "backend", b.Name, "format", f.Name)
	} else {
		log.Warn("llama-server's chat template has a tool-call format no grammar here can constrain; tools will be removed from the prompt instead of masked (set format: if you know it)", "backend", b.Name, "parsed_as", opt.Format)
	}
	return llamacpp.New(opt)
}
