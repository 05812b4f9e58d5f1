package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/config"
)

// defaultEngines are the engines' own default loopback addresses, in the order their
// models are preferred when two list the same name.
var defaultEngines = []engineAddr{
	{"llamacpp", "http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
	{"vllm", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
	{"sglang", "http://127.0.0.1:30000/v1", "http://127.0.0.1:30000/v1"},
	{"ollama", "http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"},
}

type engineAddr struct {
	kind, url, api string // api: the OpenAI base URL used to probe
}

// discover probes the default ports and returns a backend for each engine that lists its
// models. The first engine found also takes model names nobody lists.
func discover(ctx context.Context, engines []engineAddr, transport http.RoundTripper, log *slog.Logger) []config.Backend {
	var found []config.Backend
	for _, e := range engines {
		b, err := openaicompat.New(openaicompat.Options{Name: e.kind, BaseURL: e.api, Transport: transport})
		if err != nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		models, err := b.ListModels(pctx)
		cancel()
		if err != nil {
			log.Debug("no engine", "kind", e.kind, "url", e.url, "error", err)
			continue
		}
		if len(found) == 0 {
			models = append(models, "*")
		}
		log.Info("found engine", "kind", e.kind, "url", e.url, "models", models)
		found = append(found, config.Backend{Name: e.kind, Kind: e.kind, URL: e.url, Models: models,
			Timeout: config.Duration(config.DefaultTimeout)})
	}
	if len(found) == 0 {
		log.Info("no engine found on the default ports (llama-server 8080, vLLM 8000, SGLang 30000, Ollama 11434)")
	} else {
		log.Info("routing discovered engines; write a config file to name more backends (see examples/gateway.yaml)")
	}
	return found
}

// findBackends is where the backends come from when the configuration names none: the
// engines on their default ports, else, without a config file, the embedded engine's
// demo model. When there is still nothing to route to it says what would give the
// gateway an engine, including what this build cannot do itself.
func findBackends(ctx context.Context, engines []engineAddr, haveConfig bool, transport http.RoundTripper, log *slog.Logger) []config.Backend {
	found := discover(ctx, engines, transport, log)
	if len(found) == 0 && !haveConfig {
		found = demoBackends(ctx, log)
	}
	if len(found) == 0 {
		log.Warn("no backend: every model request gets a 404 (model_not_found). Start llama-server, vLLM, SGLang or Ollama on its default port, " +
			"or write a config file listing your backends and run: gateway -config FILE (see examples/gateway.yaml)" + noEngineHint)
	}
	return found
}
