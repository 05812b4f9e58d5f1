//go:build llamacpp

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/config"
)

// noEngineHint ends the warning that the gateway has nothing to route to.
const noEngineHint = "; or serve a GGUF file in process with -model FILE.gguf"

// addEmbeddedModel serves file with the embedded engine, listed under its base name.
func addEmbeddedModel(cfg *config.Config, file string) error {
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("model file: %w", err)
	}
	cfg.Backends = append(cfg.Backends, embeddedBackend(file, ggufModelName(file)))
	return nil
}

func newEmbedded(b config.Backend) (backends.Backend, error) {
	return embedded.New(embedded.Options{ModelPath: b.Model, Format: b.Format, Threads: b.Threads})
}

// demoBackends serves the random-weight demo model when nothing else was found, so a
// llamacpp build answers out of the box; it says loudly what it is.
func demoBackends(ctx context.Context, log *slog.Logger) []config.Backend {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "maskgate", "models", "demo-tiny.gguf")
	if _, err := os.Stat(path); err != nil {
		tokDir, err := tinymodel.OllamaTokenizerDir(ctx)
		if err == nil {
			var v *tinymodel.Vocab
			if v, err = tinymodel.LoadVocab(tokDir); err == nil {
				if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
					err = tinymodel.WriteFile(path, v, tinymodel.Options{})
				}
			}
		}
		if err != nil {
			log.Warn("could not make the demo model", "error", err)
			return nil
		}
	}
	log.Warn("serving the RANDOM-WEIGHT demo model as "+demoModelName+": its answers are noise, so set max_tokens. "+
		"Serve a real model with -model FILE.gguf, or start llama-server, vLLM, SGLang or Ollama on their default ports, "+
		"or write a config (examples/gateway.yaml)",
		"model", demoModelName, "file", path)
	return []config.Backend{embeddedBackend(path, demoModelName)}
}
