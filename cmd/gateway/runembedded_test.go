package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunEmbedded_RunsTheLlamacppGatewayWithTheHeaderPath: scripts/run-embedded, the
// command the gateway's messages name, exists and runs go run -tags llamacpp
// ./cmd/gateway from the repository root with the miniaudio stand-in on CGO_CPPFLAGS and
// the caller's arguments intact. go, gcc and g++ are stand-ins that record what they get,
// so the test compiles nothing and needs no C headers.
func TestRunEmbedded_RunsTheLlamacppGatewayWithTheHeaderPath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "run-embedded")
	if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable file: %v", script, err)
	}
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "go-args")
	stubs := map[string]string{
		"go":  "#!/bin/sh\n{ pwd; echo \"$CGO_CPPFLAGS\"; for a in \"$@\"; do echo \"$a\"; done; } > \"$RECORD\"\n",
		"gcc": "#!/bin/sh\nexit 0\n",
		"g++": "#!/bin/sh\ncat >/dev/null\nexit 0\n",
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(script, "-model", "my model.gguf", "-listen", "127.0.0.1:4001")
	cmd.Dir = t.TempDir() // from anywhere, not only the repository root
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RECORD="+record, "CGO_CPPFLAGS=-DX")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the script did not run go: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	want := []string{
		root,
		"-I" + filepath.Join(root, "internal", "enginetest", "cinclude") + " -DX",
		"run", "-tags", "llamacpp", "./cmd/gateway", "-model", "my model.gguf", "-listen", "127.0.0.1:4001",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("working directory, CGO_CPPFLAGS and go's arguments (-want +got):\n%s", diff)
	}
}
