//go:build llamacpp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestEmbedded_IndexServesACatalogMaskCannotFit is TestLlamaServer_IndexServesACatalogMaskCannotFit
// on llama.cpp in process (one slot of 32,768 tokens): the same replay, the same claims,
// each prompt read from the backend's own rendering (Prompt) and its reuse from the
// engine's cached-token count.
func TestEmbedded_IndexServesACatalogMaskCannotFit(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	c := indexConfig()
	c.Target, c.Kind = TargetEmbedded, ""
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: indexCtx, Slots: 1, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	_, ix := indexCatalog(t, c)
	maskBody := `{"model":"tiny","messages":[` + string(workload.SystemMessage("Run 000. ")) + `,{"role":"user","content":"hi"}],"tools":` + string(ix.Catalog().Render()) + `}`
	maskPrompt, err := be.Prompt(&backends.Request{Body: []byte(maskBody), Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	maskToks, err := be.Tokenize(maskPrompt)
	if err != nil {
		t.Fatal(err)
	}
	rec := &promptRecorder{inner: be}
	tokenize := func(p string) []int {
		toks, err := be.Tokenize(p)
		if err != nil {
			t.Fatal(err)
		}
		return toks
	}
	replayIndex(t, c, indexEngine{name: "embedded", kind: "embedded", backend: rec, ctx: indexCtx, maskTokens: len(maskToks),
		take: rec.take, tokenize: tokenize})
}

// promptRecorder keeps each request's prompt, as the embedded backend renders it, and
// the prompt tokens the engine reused; it asks for whole answers, whose usage says so.
type promptRecorder struct {
	inner *embedded.Backend
	mu    sync.Mutex
	reqs  []recorded
}

func (r *promptRecorder) ConstrainsTools() bool         { return r.inner.ConstrainsTools() }
func (r *promptRecorder) LoadsTools() backends.LoadKind { return r.inner.LoadsTools() }

func (r *promptRecorder) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	prompt, err := r.inner.Prompt(req)
	if err != nil {
		return nil, err
	}
	body, err := oai.Set(req.Body, "stream", []byte("false"))
	if err == nil {
		body, err = oai.Delete(body, "stream_options")
	}
	if err != nil {
		return nil, err
	}
	sent := *req
	sent.Body, sent.Stream = body, false
	resp, err := r.inner.ChatCompletion(ctx, &sent)
	if err != nil {
		return nil, err
	}
	var u struct {
		Usage *oai.Usage `json:"usage"`
	}
	if err := json.Unmarshal(resp.Body, &u); err != nil || u.Usage == nil || u.Usage.PromptTokensDetails == nil {
		return nil, fmt.Errorf("embedded answer without cached tokens: %s", resp.Body)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{prompt, u.Usage.PromptTokensDetails.CachedTokens})
	r.mu.Unlock()
	return resp, nil
}

func (r *promptRecorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}
