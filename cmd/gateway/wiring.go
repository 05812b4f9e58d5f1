package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/anthropic"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/backends/openai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/replicas"
	"github.com/maskgate/maskgate/backends/sglang"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
)

// buildUpstreams turns configured backends into gateway upstreams. A backend with urls
// becomes one backend over its replicas, whose health checks startHealthChecks runs.
func buildUpstreams(cfg *config.Config, transport http.RoundTripper, getenv func(string) string, log *slog.Logger) ([]gateway.Upstream, error) {
	var ups []gateway.Upstream
	for i, b := range cfg.Backends {
		key := ""
		if b.APIKeyEnv != "" {
			key = getenv(b.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("backends[%d] (%s): environment variable %s is empty; export the upstream key in it", i, b.Name, b.APIKeyEnv)
			}
		}
		var be backends.Backend
		var err error
		if len(b.URLs) > 0 {
			be, err = newReplicated(b, key, transport, log)
		} else {
			be, err = newBackend(b, key, transport, log)
		}
		if err != nil {
			return nil, fmt.Errorf("backends[%d] (%s): %w", i, b.Name, err)
		}
		// Discovered and -model backends were not in the file: its defaults, here.
		ups = append(ups, gateway.Upstream{Name: b.Name, Kind: b.Kind, Models: b.Models, Backend: be, ContextWindow: b.ContextWindow,
			ReasoningField:     b.ReasoningField,
			MaxResponseBytes:   int64(b.MaxResponseBytes),
			MaxInFlight:        cmp.Or(b.MaxInFlight, config.DefaultMaxInFlight),
			MaxQueue:           cmp.Or(b.MaxQueue, config.DefaultMaxQueue),
			QueueTimeout:       cmp.Or(time.Duration(b.QueueTimeout), config.DefaultQueueTimeout),
			HintHeader:         b.Routing.HintHeader,
			HintValue:          b.Routing.HintValue,
			SessionTokenHeader: b.Routing.SessionToken,
			NVExt:              nvext(b.Routing.NVExt)})
	}
	return ups, nil
}

func newBackend(b config.Backend, key string, transport http.RoundTripper, log *slog.Logger) (backends.Backend, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout, idle := time.Duration(b.Timeout), time.Duration(b.IdleTimeout)
	compat := openaicompat.Options{Name: b.Name, BaseURL: b.URL, APIKey: key, Transport: transport, Timeout: timeout,
		IdleTimeout: idle, MaxResponseBytes: int64(b.MaxResponseBytes), MaxEventBytes: int(b.MaxEventBytes)}
	switch b.Kind {
	case "vllm":
		// The structural tag must be in the model's format: format: (default hermes).
		compat.Format = b.Format
		return vllm.New(compat)
	case "openai":
		// allowed_tools enforces the loaded set; names OpenAI refuses are mapped both ways.
		return openai.New(openai.Options{Options: compat})
	case "sglang":
		// A structural tag in response_format; cached tokens need --enable-cache-report.
		compat.Format = b.Format
		return sglang.New(compat)
	case "anthropic":
		// The Messages API, translated both ways; it cannot constrain, so it gets remove.
		return anthropic.New(anthropic.Options{Name: b.Name, BaseURL: b.URL, APIKey: key, Transport: transport, Timeout: timeout,
			IdleTimeout: idle, MaxResponseBytes: int64(b.MaxResponseBytes), MaxEventBytes: int(b.MaxEventBytes)})
	case "llamacpp":
		// /apply-template + /completion keep the prompt the client's bytes and take a
		// grammar for the loaded set; llama-server's /v1 refuses a grammar with tools.
		return newLlamaCpp(b, transport, log)
	case "ollama":
		return ollama.New(ollama.Options{Name: b.Name, BaseURL: b.URL, Transport: transport, Timeout: timeout, IdleTimeout: idle})
	case "embedded":
		return newEmbedded(b)
	}
	return nil, fmt.Errorf("kind %q is not supported by this build yet", b.Kind)
}

// newReplicated builds one backend of b's kind per entry of b.urls, behind a replica
// router. Replica i is named "NAME[i]" in errors, as its address is urls[i].
func newReplicated(b config.Backend, key string, transport http.RoundTripper, log *slog.Logger) (*replicas.Backend, error) {
	rs := make([]replicas.Replica, len(b.URLs))
	for i, u := range b.URLs {
		one := b
		one.Name, one.URL, one.URLs = fmt.Sprintf("%s[%d]", b.Name, i), u, nil
		be, err := newBackend(one, key, transport, log)
		if err != nil {
			return nil, fmt.Errorf("urls[%d]: %w", i, err)
		}
		id := strings.TrimRight(u, "/")
		if pu, err := url.Parse(id); err == nil {
			id = pu.Redacted() // the ID is logged: no password from the URL
		}
		rs[i] = replicas.Replica{ID: id, Backend: be}
	}
	return replicas.New(replicas.Options{Name: b.Name, Replicas: rs,
		HealthInterval: time.Duration(b.HealthInterval), Logger: log})
}

// secretValues are the values of every secret the configuration names (upstream keys,
// the admin key, the embeddings key, the thread salt, the MCP servers' header tokens, the
// Redis password), for the log redactor.
func secretValues(cfg *config.Config, getenv func(string) string) []string {
	names := []string{cfg.AdminKeyEnv, cfg.Search.Embeddings.APIKeyEnv, cfg.ThreadSaltEnv, cfg.State.Redis.PasswordEnv}
	for _, b := range cfg.Backends {
		names = append(names, b.APIKeyEnv)
	}
	for _, m := range cfg.MCPServers {
		for _, header := range slices.Sorted(maps.Keys(m.HeadersEnv)) {
			names = append(names, m.HeadersEnv[header])
		}
	}
	for _, k := range cfg.Keys {
		names = append(names, k.KeyEnv, k.MCPTokenEnv)
	}
	var out []string
	for _, n := range names {
		if n == "" {
			continue
		}
		if v := getenv(n); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// startHealthChecks runs, until ctx is done, the background checks of every backend
// that has them (those with replicas).
func startHealthChecks(ctx context.Context, ups []gateway.Upstream) {
	for _, u := range ups {
		if s, ok := u.Backend.(interface{ Start(context.Context) }); ok {
			s.Start(ctx)
		}
	}
}

// nvext is a backend's configured nvext members as the gateway writes them.
func nvext(n config.NVExt) backends.NVExt {
	return backends.NVExt{SessionControl: n.SessionControl, SessionAction: n.SessionAction, SessionTimeout: n.SessionTimeout,
		Priority: n.Priority, StrictPriority: n.StrictPriority, SpeculativePrefill: n.SpeculativePrefill}
}
