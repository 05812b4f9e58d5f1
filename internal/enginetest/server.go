package enginetest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

// TinyModelName is the name the tiny model is created under.
const TinyModelName = "maskgate-tiny"

// OllamaOptions configure StartOllama. The zero value is the default: the
// default tiny model (seed 0) with its whole 131072-token context.
type OllamaOptions struct {
	// Model shapes and seeds the tiny model. The zero value is the default
	// model with seed 0.
	Model tinymodel.Options
	// NumCtx is the model's num_ctx parameter. Zero means the model's
	// trained context (Model.ContextLength, else
	// tinymodel.DefaultContextLength), so long prompts are never silently
	// truncated. The KV cache for all of it is a few MiB.
	NumCtx int
	// Env holds extra KEY=value variables for `ollama serve`, such as
	// OLLAMA_NUM_PARALLEL=2. They are applied last and win.
	Env []string
}

// OllamaServer is one running `ollama serve`, owned by one test.
type OllamaServer struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// Model is the name of the tiny model, created and ready to serve.
	Model string

	*process
}

// Ollama starts an Ollama with the default tiny model; see StartOllama.
func Ollama(t testing.TB) *OllamaServer {
	t.Helper()
	return StartOllama(t, OllamaOptions{})
}

// StartOllama builds ollama if needed, starts `ollama serve` on a free
// loopback port with its own models folder and HOME, creates the tiny model,
// and stops the server's whole process group (server and runners) when the
// test ends. It fails the test, with the server's log, if any step fails.
func StartOllama(t testing.TB, o OllamaOptions) *OllamaServer {
	t.Helper()
	bin := OllamaBinary(t)
	gguf := TinyModelFile(t, filepath.Dir(bin), o.Model)
	numCtx := o.NumCtx
	if numCtx == 0 {
		numCtx = o.Model.ContextLength
	}
	if numCtx == 0 {
		numCtx = tinymodel.DefaultContextLength
	}

	// A port picked by listening on :0 can be taken again before ollama
	// binds it; another port is the whole remedy.
	var s *OllamaServer
	for attempt := 1; ; attempt++ {
		var err error
		s, err = startServe(t, bin, o.Env)
		if err == nil {
			break
		}
		if attempt < 3 && s != nil && strings.Contains(s.LogTail(), "address already in use") {
			continue
		}
		if s != nil {
			t.Fatalf("enginetest: start ollama: %v\nollama log:\n%s", err, s.LogTail())
		}
		t.Fatalf("enginetest: start ollama: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := createModel(ctx, s.Client(), TinyModelName, gguf, numCtx); err != nil {
		t.Fatalf("enginetest: %v\nollama log:\n%s", err, s.LogTail())
	}
	s.Model = TinyModelName
	return s
}

// startServe starts the process and waits until it answers. On an error
// after the process started, it returns the (stopped) server for its log.
func startServe(t testing.TB, bin string, extraEnv []string) (*OllamaServer, error) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	models := filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := startProcess(t, "ollama", "http://"+addr, dir, bin, []string{"serve"}, serveEnv(os.Environ(), addr, home, models, extraEnv))
	if err != nil {
		return nil, err
	}
	s := &OllamaServer{URL: p.url, process: p}
	if err := s.waitReady(t.Context(), "/api/version", time.Minute); err != nil {
		s.Kill()
		return s, err
	}
	return s, nil
}

// serveEnv drops the caller's OLLAMA_* variables, which could point the
// server at a developer's own models or host, then sets the test's own.
func serveEnv(base []string, addr, home, models string, extra []string) []string {
	env := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		return strings.HasPrefix(kv, "OLLAMA_") || strings.HasPrefix(kv, "HOME=")
	})
	env = append(env,
		"HOME="+home,
		"OLLAMA_HOST="+addr,
		"OLLAMA_MODELS="+models,
		// Tests may pause between requests for longer than the default five
		// minutes; an unload would turn a cache test into a load test.
		"OLLAMA_KEEP_ALIVE=24h",
		"OLLAMA_NOPRUNE=1",
		// ggml's CPU flash attention was about four times slower than the
		// plain path on long prompts with this model; the output is the same
		// kind of noise either way.
		"OLLAMA_FLASH_ATTENTION=0",
	)
	return append(env, extra...)
}

// Client returns an Ollama API client for this server, with its own
// http.Client and no timeout: generation streams can be long.
func (s *OllamaServer) Client() *api.Client {
	u, err := url.Parse(s.URL)
	if err != nil {
		panic(err) // URL is built by startServe
	}
	return api.NewClient(u, &http.Client{})
}
