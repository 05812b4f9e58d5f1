//go:build !llamacpp

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun_ModelFlagWithoutEmbeddedEngineSaysHowToGetIt(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-model", "x.gguf"}, func(string) string { return "" }, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "-tags llamacpp") {
		t.Errorf("stderr %q", stderr.String())
	}
}
