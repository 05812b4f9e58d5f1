//go:build !llamacpp

package main

import "errors"

func newEmbeddedTarget(Config) (*engineTarget, error) {
	return nil, errors.New(`-target embedded needs the embedded engine; from the repository root run: ` +
		`CGO_CPPFLAGS="-I$PWD/internal/enginetest/cinclude" go run -tags llamacpp ./bench/replay -target embedded ` +
		`(it needs Debian's nlohmann-json3-dev and libstb-dev; scripts/run-embedded installs them as root or prints the apt-get line)`)
}
