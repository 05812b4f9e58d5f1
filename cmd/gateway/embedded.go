//go:build !llamacpp

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
)

// noEngineHint ends the warning that the gateway has nothing to route to: this build
// cannot serve the demo model, a llamacpp build can.
const noEngineHint = "; or, from a source checkout, run " + runEmbedded + ": the gateway with the embedded " +
	"llama.cpp engine, which serves a random-weight demo model (" + demoModelName + ") when it finds no engine, " +
	"and a real one with " + runEmbedded + " -model FILE.gguf"

// addEmbeddedModel fails: this build has no embedded engine. The error is the command
// that serves file with one.
func addEmbeddedModel(cfg *config.Config, file string) error {
	return fmt.Errorf("this gateway was built without the embedded engine (build tag llamacpp); "+
		"from a source checkout run: %s -model %s (it builds that engine, installing or naming the C headers it needs), "+
		"or serve the file with llama-server --jinja and run the gateway without -model", runEmbedded, shellWord(file))
}

func newEmbedded(config.Backend) (backends.Backend, error) {
	return nil, fmt.Errorf("kind embedded: this gateway was built without the embedded engine (build tag llamacpp); "+
		"from a source checkout, %s runs one that has it, with the same flags", runEmbedded)
}

// demoBackends has no demo to offer without the embedded engine.
func demoBackends(context.Context, *slog.Logger) []config.Backend { return nil }
