//go:build !llamacpp

package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestRun_ModelFlagWithoutEmbeddedEngineNamesACommandThatWorks: the pure-Go build asked
// for -model answers with the command, from a source checkout, that serves that very
// file (the script exists: runembedded_test.go runs it), not a bare go build that fails
// for want of C headers.
func TestRun_ModelFlagWithoutEmbeddedEngineNamesACommandThatWorks(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"x.gguf", "scripts/run-embedded -model x.gguf "},
		{"my models/q.gguf", "scripts/run-embedded -model 'my models/q.gguf' "},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{"-model", tc.file}, func(string) string { return "" }, &stderr); code != 2 {
			t.Fatalf("-model %q: exit %d, want 2", tc.file, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("-model %q: stderr %q does not contain %q", tc.file, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String(), "go build") {
			t.Errorf("-model %q: stderr %q still names go build", tc.file, stderr.String())
		}
	}
}

// TestFindBackends_NothingFoundSaysTheEmbeddedBuildServesADemo: with no config and no
// engine on the default ports, the pure-Go build has no demo of its own, and says which
// command runs the build that has one.
func TestFindBackends_NothingFoundSaysTheEmbeddedBuildServesADemo(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	nowhere := []engineAddr{{"llamacpp", "http://127.0.0.1:1", "http://127.0.0.1:1/v1"}}
	if found := findBackends(context.Background(), nowhere, false, http.DefaultTransport, log); len(found) != 0 {
		t.Fatalf("found %+v where nothing listens", found)
	}
	for _, want := range []string{
		"level=WARN",
		"gateway -config FILE",
		"scripts/run-embedded: the gateway with the embedded llama.cpp engine, which serves a random-weight demo model (maskgate-demo)",
		"scripts/run-embedded -model FILE.gguf",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not contain %q:\n%s", want, logs.String())
		}
	}
}
