package nodetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NpmCI is the install command Node runs, and the one its failures tell the
// user to run.
const NpmCI = "npm ci --no-audit --no-fund"

// Node returns the path of the node binary once dir's packages, pinned by
// dir/package-lock.json, are installed, running NpmCI in dir first when
// dir/node_modules is missing or stale. dir is relative to the test's
// working directory (its package's folder) or absolute. On failure the
// test fails with the exact command that fixes it.
func Node(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	node, err := install(abs)
	if err != nil {
		t.Fatalf("%v\n\nThese tests need Node.js 20+ and npm. Install them, then run:\n\tcd %s && %s", err, abs, NpmCI)
	}
	return node
}

func install(dir string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not on PATH: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on PATH: %w", err)
	}

	// `go test ./...` runs packages in parallel processes; the lock keeps two
	// of them from running npm ci into the same node_modules at once.
	lockPath := filepath.Join(dir, "package-lock.json")
	lock, err := os.Open(lockPath)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lockPath, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	fresh, err := fresh(dir, lock)
	if err != nil || fresh {
		return node, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, strings.Fields(NpmCI)[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s in %s failed: %w\n%s", NpmCI, dir, err, out)
	}
	return node, nil
}

// fresh reports whether npm's record of the installed tree,
// node_modules/.package-lock.json (written last by an install), is at least
// as new as the lock.
func fresh(dir string, lock *os.File) (bool, error) {
	want, err := lock.Stat()
	if err != nil {
		return false, err
	}
	have, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !have.ModTime().Before(want.ModTime()), nil
}
