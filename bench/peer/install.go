package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// npmCI installs exactly what testdata/node/package-lock.json pins.
const npmCI = "npm ci --no-audit --no-fund"

// installPortkey returns the node binary once nodeDir's packages (Portkey, pinned by
// its package-lock.json) are installed, running npm ci there first when node_modules is
// missing or older than the lock. It takes the same lock on package-lock.json as
// internal/nodetest and scripts/test, so that a test installing the same folder at the
// same time waits rather than collides.
func installPortkey(ctx context.Context, nodeDir string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not on PATH (Node.js 20+ runs Portkey): %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on PATH (it installs Portkey): %w", err)
	}
	lockPath := filepath.Join(nodeDir, "package-lock.json")
	lock, err := os.Open(lockPath)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("lock %s: %w", lockPath, err)
	}
	defer unlockFile(lock)

	want, err := lock.Stat()
	if err != nil {
		return "", err
	}
	have, err := os.Stat(filepath.Join(nodeDir, "node_modules", ".package-lock.json"))
	switch {
	case err == nil && !have.ModTime().Before(want.ModTime()):
		return node, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, strings.Fields(npmCI)[1:]...)
	cmd.Dir = nodeDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s in %s failed: %w\n%s", npmCI, nodeDir, err, out)
	}
	return node, nil
}

// nodeDirFrom finds bench/peer/testdata/node: under the module root above dir (the
// working directory of `go run ./bench/peer` or of the package's test).
func nodeDirFrom(dir string) (string, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bench", "peer", "testdata", "node"), nil
}

// moduleRoot is the nearest folder at or above dir whose go.mod declares this module.
func moduleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if strings.Contains(string(b), "module github.com/maskgate/maskgate\n") {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no maskgate checkout at or above %s: run the bench from inside the repository, or give -node-dir", dir)
		}
	}
}
