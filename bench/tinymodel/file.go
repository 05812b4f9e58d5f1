package tinymodel

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes the model to path atomically: it writes a temporary file
// in the same folder and renames it, so a reader that finds path (another
// test process sharing a cache) never sees a half-written model.
func WriteFile(path string, v *Vocab, o Options) (err error) {
	// A fresh machine's cache has no models folder yet; nothing else makes it.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := Write(tmp, v, o); err != nil {
		return fmt.Errorf("tinymodel: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tinymodel: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	return nil
}
