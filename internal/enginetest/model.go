package enginetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

// TinyModelFile returns the path of the tiny model's GGUF for o, generating
// it into dir on first use. The name carries tinymodel.Version and a hash of
// every option, so a changed generator or shape never reuses a stale file;
// tinymodel.WriteFile renames into place, so concurrent test processes at
// worst both write the same bytes.
func TinyModelFile(t testing.TB, dir string, o tinymodel.Options) string {
	t.Helper()
	shape := sha256.Sum256(fmt.Appendf(nil, "%#v", o)) // %#v names every field, new ones too
	name := fmt.Sprintf("tinymodel-v%d-seed%d-%x.gguf", tinymodel.Version, o.Seed, shape[:6])
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}

	vocabDir, err := tinymodel.OllamaTokenizerDir(t.Context())
	if err != nil {
		t.Fatalf("enginetest: tiny model vocabulary: %v", err)
	}
	vocab, err := tinymodel.LoadVocab(vocabDir)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	if err := tinymodel.WriteFile(path, vocab, o); err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	return path
}

// createModel registers the GGUF with the server the way `ollama create`
// does (upload the blob, then create from it), without a Modelfile or the
// CLI: the template and parameters go in the request as they are.
func createModel(ctx context.Context, c *api.Client, name, gguf string, numCtx int) error {
	digest, err := fileDigest(gguf)
	if err != nil {
		return err
	}
	f, err := os.Open(gguf)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := c.CreateBlob(ctx, digest, f); err != nil {
		return fmt.Errorf("upload %s: %w", gguf, err)
	}

	stream := false
	req := &api.CreateRequest{
		Model:    name,
		Stream:   &stream,
		Files:    map[string]string{filepath.Base(gguf): digest},
		Template: tinymodel.OllamaTemplate,
		Parameters: map[string]any{
			"stop":    []string{tinymodel.StopSequence},
			"num_ctx": numCtx,
			// One thread: see Threads.
			"num_thread": Threads,
		},
	}
	if err := c.Create(ctx, req, func(api.ProgressResponse) error { return nil }); err != nil {
		return fmt.Errorf("create %s from %s: %w", name, gguf, err)
	}
	return nil
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
