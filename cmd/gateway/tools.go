package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/toolsearch"
)

// loadTools reads the profile's tool files, relative to the config file's folder, and
// indexes them once. No files means no profile catalog (nil).
func loadTools(cfg *config.Config, configPath string) (*toolsearch.Index, error) {
	if len(cfg.Tools.Files) == 0 {
		return nil, nil
	}
	paths := make([]string, len(cfg.Tools.Files))
	for i, f := range cfg.Tools.Files {
		if !filepath.IsAbs(f) && configPath != "" {
			f = filepath.Join(filepath.Dir(configPath), f)
		}
		paths[i] = f
	}
	tools, err := toolsearch.ReadFiles(paths...)
	if err != nil {
		return nil, fmt.Errorf("tools.files: %w", err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		return nil, fmt.Errorf("tools.files: %w", err)
	}
	o := toolsearch.Options{}
	if cfg.Search.Scorer == "keyword" {
		o.Scorer = toolsearch.Keyword
	}
	return toolsearch.NewIndex(cat, o), nil
}

// loadHybrid embeds the profile catalog once, when an embeddings backend is configured.
// A backend that fails at start leaves search lexical, with a warning: tool search must
// not depend on a second service being up.
func loadHybrid(ctx context.Context, cfg *config.Config, ix *toolsearch.Index, transport http.RoundTripper, getenv func(string) string, log *slog.Logger) *toolsearch.Hybrid {
	return embed(ctx, cfg.Search.Embeddings, ix, transport, getenv, log)
}

// embed is ix with vectors from e, or nil when e is not set or fails.
func embed(ctx context.Context, e config.Embeddings, ix *toolsearch.Index, transport http.RoundTripper, getenv func(string) string, log *slog.Logger) *toolsearch.Hybrid {
	if e.URL == "" || ix == nil {
		return nil
	}
	key := ""
	if e.APIKeyEnv != "" {
		key = getenv(e.APIKeyEnv)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	h, err := toolsearch.NewHybrid(ctx, ix, &toolsearch.OpenAIEmbedder{BaseURL: e.URL, Model: e.Model, APIKey: key, Transport: transport}, toolsearch.HybridOptions{})
	if err != nil {
		log.Warn("embeddings backend failed; tool search stays lexical", "url", e.URL, "error", err)
		return nil
	}
	log.Info("hybrid tool search", "embeddings", e.URL, "model", e.Model)
	return h
}
