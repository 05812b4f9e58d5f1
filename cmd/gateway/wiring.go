package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
)

// buildUpstreams turns configured backends into gateway upstreams.
func buildUpstreams(cfg *config.Config, transport http.RoundTripper, getenv func(string) string) ([]gateway.Upstream, error) {
	var ups []gateway.Upstream
	for i, b := range cfg.Backends {
		key := ""
		if b.APIKeyEnv != "" {
			key = getenv(b.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("backends[%d] (%s): environment variable %s is empty; export the upstream key in it", i, b.Name, b.APIKeyEnv)
			}
		}
		be, err := newBackend(b, key, transport)
		if err != nil {
			return nil, fmt.Errorf("backends[%d] (%s): %w", i, b.Name, err)
		}
		ups = append(ups, gateway.Upstream{Name: b.Name, Kind: b.Kind, Models: b.Models, Backend: be, ContextWindow: b.ContextWindow})
	}
	return ups, nil
}

func newBackend(b config.Backend, key string, transport http.RoundTripper) (backends.Backend, error) {
	timeout := time.Duration(b.Timeout)
	switch b.Kind {
	case "vllm":
		return vllm.New(openaicompat.Options{Name: b.Name, BaseURL: b.URL, APIKey: key, Transport: transport, Timeout: timeout})
	case "openai", "sglang":
		return openaicompat.New(openaicompat.Options{Name: b.Name, BaseURL: b.URL, APIKey: key,
			Transport: transport, Timeout: timeout, ReportsCache: true})
	case "llamacpp":
		// /apply-template + /completion keep the prompt the client's bytes and take a
		// grammar for the loaded set; llama-server's /v1 refuses a grammar with tools.
		return llamacpp.New(llamacpp.Options{Name: b.Name, BaseURL: b.URL, Transport: transport, Timeout: timeout,
			Grammar: hermesGrammar})
	case "ollama":
		return ollama.New(ollama.Options{Name: b.Name, BaseURL: b.URL, Transport: transport, Timeout: timeout})
	case "embedded":
		return newEmbedded(b)
	}
	return nil, fmt.Errorf("kind %q is not supported by this build yet", b.Kind)
}
