//go:build llamacpp

package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// modelPath returns the tiny model, generated once into the user cache folder that
// scripts/build-ollama.sh uses too.
func modelPath(t testing.TB) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, "maskgate", "models")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return enginetest.TinyModelFile(t, dir, tinymodel.Options{})
}

func newBackend(t testing.TB, o Options) *Backend {
	t.Helper()
	o.ModelPath = modelPath(t)
	if o.NumCtx == 0 {
		o.NumCtx = 4096
	}
	if o.Threads == 0 {
		o.Threads = enginetest.Threads
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func chatBody(t testing.TB, req map[string]any) []byte {
	t.Helper()
	if _, ok := req["model"]; !ok {
		req["model"] = "tiny"
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func msgs(pairs ...string) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"role": pairs[i], "content": pairs[i+1]})
	}
	return out
}

func complete(t testing.TB, b *Backend, req map[string]any, m Masker) *oai.ChatCompletion {
	t.Helper()
	resp, err := b.ChatCompletionMasked(context.Background(), &backends.Request{Body: chatBody(t, req), Model: "tiny"}, m)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Cache != backends.CacheReported {
		t.Errorf("Cache = %q, want reported", resp.Cache)
	}
	var c oai.ChatCompletion
	if err := json.Unmarshal(resp.Body, &c); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	if len(c.Choices) != 1 || c.Usage == nil || c.Usage.PromptTokensDetails == nil {
		t.Fatalf("malformed completion: %s", resp.Body)
	}
	return &c
}

// readAll drains a stream into its chunks.
func readAll(t testing.TB, s backends.Stream) []oai.Chunk {
	t.Helper()
	defer s.Close()
	var out []oai.Chunk
	for {
		data, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var c oai.Chunk
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		out = append(out, c)
	}
}

// promptTokens renders and tokenizes a request's messages as the engine does.
func promptTokens(t testing.TB, b *Backend, m []map[string]any) []int {
	t.Helper()
	var r oai.ChatRequest
	if err := json.Unmarshal(chatBody(t, map[string]any{"messages": m}), &r); err != nil {
		t.Fatal(err)
	}
	p, err := b.tmpl.render(r.Messages, r.Tools, b.format.parse, false)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := b.Tokenize(p)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// onlyTokens allows one token after another from a script, then only end.
type onlyTokens struct {
	script   []int
	end      int // allowed once the script is done; -1: keep the last
	accepted []int
}

func (m *onlyTokens) Allowed(dst []uint64) bool {
	next := m.end
	if n := len(m.accepted); n < len(m.script) {
		next = m.script[n]
	} else if next < 0 {
		next = m.script[len(m.script)-1]
	}
	dst[next/64] |= 1 << (next % 64)
	return true
}

func (m *onlyTokens) Accept(tok int) error {
	m.accepted = append(m.accepted, tok)
	return nil
}

// noEnd allows every token but the end-of-generation ones, so decoding runs to max_tokens.
type noEnd struct{ allow []uint64 }

func newNoEnd(b *Backend) *noEnd {
	m := &noEnd{allow: make([]uint64, (b.vocab+63)/64)}
	for t := range b.vocab {
		if !b.model.TokenIsEog(t) {
			m.allow[t/64] |= 1 << (t % 64)
		}
	}
	return m
}

func (m *noEnd) Allowed(dst []uint64) bool { copy(dst, m.allow); return true }

func (*noEnd) Accept(int) error { return nil }
