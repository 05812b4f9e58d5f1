//go:build llamacpp

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/kvcache"
)

// newEmbeddedTarget starts llama.cpp in-process on c.GGUF, or on the tiny random-weight
// model, generated into the user cache directory the first time.
func newEmbeddedTarget(c Config) (*engineTarget, error) {
	path := c.GGUF
	tiny := path == ""
	if tiny {
		var err error
		if path, err = tinyModel(); err != nil {
			return nil, fmt.Errorf("the tiny model: %w; give a GGUF file with -gguf", err)
		}
	}
	be, err := embedded.New(embedded.Options{ModelPath: path, NumCtx: c.NumCtx, Slots: c.Slots, QueueSize: c.Concurrency + 4, Threads: c.Threads})
	if err != nil {
		return nil, err
	}
	about := TargetInfo{Name: "embedded llama.cpp, " + filepath.Base(path), Kind: "embedded", Model: "replay",
		Tokens:     "the engine's own: its tokenizer and exact cached-token counts (prefix-reusing slots)",
		Times:      "measured on this machine's CPU",
		TimesCount: !tiny,
	}
	if tiny {
		about.Times = "measured on the tiny random-weight model on this CPU: NOT representative of real models " +
			"(on a tiny model attention over a long cached prompt dominates, so a long cached prompt can look slower than a short recomputed one, which real models reverse)"
	}
	// The engine masks to Request.Allowed, narrows to an allowed_tools tool_choice and
	// serves index where it constrains (LoadsTools).
	caps := kvcache.Capabilities{Constrains: true, AllowedTools: true, CachesPrefixes: true, Index: be.LoadsTools() != backends.LoadNone}
	return &engineTarget{about: about, caps: caps, scr: scripted(be, c), closeFn: be.Close}, nil
}

func tinyModel() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "maskgate", "models", "demo-tiny.gguf")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tokDir, err := tinymodel.OllamaTokenizerDir(ctx)
	if err != nil {
		return "", err
	}
	v, err := tinymodel.LoadVocab(tokDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, tinymodel.WriteFile(path, v, tinymodel.Options{})
}
