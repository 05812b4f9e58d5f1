//go:build !llamacpp

package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
)

var errNoEmbedded = errors.New("this gateway was built without the embedded engine; " +
	"build it with: go build -tags llamacpp ./cmd/gateway (needs cgo; see the README), " +
	"or serve the model with llama-server and point the gateway at it")

// addEmbeddedModel routes every model name to an embedded engine serving file.
func addEmbeddedModel(cfg *config.Config, file string) error {
	if _, err := newEmbedded(config.Backend{Kind: "embedded", Model: file}); err != nil {
		return err
	}
	cfg.Backends = append(cfg.Backends, config.Backend{Name: "embedded", Kind: "embedded", Model: file, Models: []string{"*"}})
	return nil
}

func newEmbedded(config.Backend) (backends.Backend, error) { return nil, errNoEmbedded }

// demoBackends has no demo to offer without the embedded engine.
func demoBackends(context.Context, *slog.Logger) []config.Backend { return nil }
