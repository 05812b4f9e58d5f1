//go:build !llamacpp

package main

import "errors"

func newEmbeddedTarget(Config) (*engineTarget, error) {
	return nil, errors.New(`-target embedded needs the embedded engine: build with -tags llamacpp and ` +
		`CGO_CPPFLAGS="-I$PWD/internal/enginetest/cinclude" (see the README's Test section)`)
}
