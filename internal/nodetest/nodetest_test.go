package nodetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstall_RunsNpmCIOnlyWhenStale: a folder with a lock and no
// node_modules is installed; once installed, npm is not run again until the
// lock is newer than the install.
func TestInstall_RunsNpmCIOnlyWhenStale(t *testing.T) {
	dir := t.TempDir()
	// A package with one local dependency: npm ci needs no registry.
	writeFile(t, filepath.Join(dir, "dep", "package.json"), `{"name":"dep","version":"1.0.0"}`)
	writeFile(t, filepath.Join(dir, "package.json"), `{"name":"t","private":true,"dependencies":{"dep":"file:dep"}}`)
	writeFile(t, filepath.Join(dir, "package-lock.json"), `{"name":"t","lockfileVersion":3,"requires":true,"packages":{`+
		`"":{"name":"t","dependencies":{"dep":"file:dep"}},`+
		`"dep":{"version":"1.0.0"},`+
		`"node_modules/dep":{"resolved":"dep","link":true}}}`)

	node, err := install(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(node) != "node" {
		t.Errorf("node = %q", node)
	}
	record := filepath.Join(dir, "node_modules", ".package-lock.json")
	installed, err := os.Stat(record)
	if err != nil {
		t.Fatalf("npm ci left no record: %v", err)
	}

	// Fresh: a second call leaves the install alone.
	old := installed.ModTime().Add(-time.Hour)
	if err := os.Chtimes(record, old, old); err != nil {
		t.Fatal(err)
	}
	lockOld := old.Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "package-lock.json"), lockOld, lockOld); err != nil {
		t.Fatal(err)
	}
	if _, err := install(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(record); !st.ModTime().Equal(old) {
		t.Error("npm ci ran again on a fresh install")
	}

	// Stale: a newer lock installs again.
	now := time.Now()
	if err := os.Chtimes(filepath.Join(dir, "package-lock.json"), now, now); err != nil {
		t.Fatal(err)
	}
	if _, err := install(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(record); st.ModTime().Equal(old) {
		t.Error("npm ci did not run for a lock newer than the install")
	}
}

func TestInstall_NoLockIsAnError(t *testing.T) {
	if _, err := install(t.TempDir()); err == nil || !strings.Contains(err.Error(), "package-lock.json") {
		t.Errorf("err = %v, want one naming package-lock.json", err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
