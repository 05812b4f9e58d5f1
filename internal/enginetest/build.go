package enginetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// OllamaBinary returns the path of an ollama binary built from the module
// version go.mod requires, building it on first use (scripts/build-ollama.sh).
// A cold build takes 7-15 minutes on two cores; a cached binary returns in
// well under a second.
func OllamaBinary(t testing.TB) string {
	t.Helper()
	return engineBinary(t, "build-ollama.sh")
}

// LlamaServerBinary returns the path of a llama-server binary built from the
// llama.cpp release the pinned node-llama-cpp package ships, building it on
// first use (scripts/build-llama-server.sh). A cold build takes about 11
// minutes on two cores; a cached binary returns in well under a second.
func LlamaServerBinary(t testing.TB) string {
	t.Helper()
	return engineBinary(t, "build-llama-server.sh")
}

// engineBinary runs one of the scripts/ build recipes, the ones CI and
// humans use too, and returns the binary path it prints last. The scripts
// cache the binary outside the repository and serialize concurrent builds
// with a file lock, so parallel test packages build once; progress is logged
// as it happens.
func engineBinary(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		// Building an engine from source takes minutes; -short is the quick pass.
		t.Skipf("-short: this test needs an engine built from source (scripts/%s); the README's test command runs it", name)
	}
	root := moduleRoot(t)
	script := filepath.Join(root, "scripts", name)

	cmd := exec.CommandContext(t.Context(), script)
	cmd.Dir = root
	// The script's build and compilers must die with it: a build left
	// running would hold the build lock for minutes.
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout bytes.Buffer
	stderr := &lineLogger{t: t}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	stderr.flush()
	if err != nil {
		t.Fatalf("enginetest: %s failed (its output is logged above): %v", script, err)
	}

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	bin := lines[len(lines)-1]
	if info, err := os.Stat(bin); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("enginetest: %s printed %q, which is not an executable: %v", script, bin, err)
	}
	return bin
}

// moduleRoot asks the go command, rather than trusting the source path of
// this file, which -trimpath rewrites.
func moduleRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		t.Fatalf("enginetest: cannot find the maskgate module (go env GOMOD = %q): %v", gomod, err)
	}
	return filepath.Dir(gomod)
}

// lineLogger passes a child's output to t.Logf a line at a time, so a long
// build shows progress under go test -v instead of ten silent minutes.
type lineLogger struct {
	t   testing.TB
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Logf("%s", l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) flush() {
	if len(l.buf) > 0 {
		l.t.Logf("%s", l.buf)
		l.buf = nil
	}
}

// tail returns the last n bytes of b, starting at a line boundary.
func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return "...\n" + string(b)
}
