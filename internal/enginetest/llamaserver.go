package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

// LlamaServerOptions configure StartLlamaServer. The zero value is the
// default: the default tiny model (seed 0) with its whole context, one slot.
type LlamaServerOptions struct {
	// Model shapes and seeds the tiny model. The zero value is the default
	// model with seed 0.
	Model tinymodel.Options
	// CtxSize is --ctx-size. Zero means the model's trained context
	// (Model.ContextLength, else tinymodel.DefaultContextLength), so long
	// prompts are never silently truncated.
	CtxSize int
	// Parallel is --parallel, the number of slots. Zero means 1: one slot
	// makes cache reuse (cache_n) depend on the requests alone.
	Parallel int
	// Args are extra command-line arguments, applied last.
	Args []string
}

// LlamaServer is one running llama-server, owned by one test, serving the
// tiny model with --jinja (its chat template from the GGUF).
type LlamaServer struct {
	// URL is the server root, http://127.0.0.1:PORT, as llama-server's own
	// clients write it (and as the llamacpp backend's url takes it).
	URL string
	// Model is the alias the model is served under (GET /v1/models).
	Model string

	*process
}

// Llama starts a llama-server with the default tiny model; see
// StartLlamaServer.
func Llama(t testing.TB) *LlamaServer {
	t.Helper()
	return StartLlamaServer(t, LlamaServerOptions{})
}

// StartLlamaServer builds llama-server if needed, starts it on a free
// loopback port with the tiny model, waits until GET /health answers 200
// (the model is loaded), and stops it when the test ends. It fails the test,
// with the server's log, if any step fails.
func StartLlamaServer(t testing.TB, o LlamaServerOptions) *LlamaServer {
	t.Helper()
	bin := LlamaServerBinary(t)
	gguf := TinyModelFile(t, filepath.Dir(bin), o.Model)
	ctx := o.CtxSize
	if ctx == 0 {
		ctx = o.Model.ContextLength
	}
	if ctx == 0 {
		ctx = tinymodel.DefaultContextLength
	}
	parallel := max(o.Parallel, 1)

	for attempt := 1; ; attempt++ {
		s, err := startLlamaServer(t, bin, gguf, ctx, parallel, o.Args)
		if err == nil {
			return s
		}
		// A port picked by listening on :0 can be taken again before the
		// server binds it; another port is the whole remedy.
		if attempt < 3 && s != nil && strings.Contains(s.LogTail(), "couldn't bind") {
			continue
		}
		if s != nil {
			t.Fatalf("enginetest: start llama-server: %v\nllama-server log:\n%s", err, s.LogTail())
		}
		t.Fatalf("enginetest: start llama-server: %v", err)
	}
}

func startLlamaServer(t testing.TB, bin, gguf string, ctx, parallel int, extra []string) (*LlamaServer, error) {
	t.Helper()
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--model", gguf,
		"--alias", TinyModelName,
		"--host", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--jinja",
		"--ctx-size", strconv.Itoa(ctx),
		"--parallel", strconv.Itoa(parallel),
		// One thread: see Threads.
		"--threads", strconv.Itoa(Threads),
		// The warm-up decode only slows the start of a random model.
		"--no-warmup",
	}
	args = append(args, extra...)
	// LLAMA_ARG_* variables of the caller's would change the server's
	// options behind the test's back; HOME keeps its cache out of the user's.
	env := slices.DeleteFunc(slices.Clone(os.Environ()), func(kv string) bool {
		return strings.HasPrefix(kv, "LLAMA_") || strings.HasPrefix(kv, "HOME=")
	})
	env = append(env, "HOME="+dir)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	p, err := startProcess(t, "llama-server", url, dir, bin, args, env)
	if err != nil {
		return nil, err
	}
	s := &LlamaServer{URL: url, Model: TinyModelName, process: p}
	if err := s.waitReady(t.Context(), "/health", 2*time.Minute); err != nil {
		s.Kill()
		return s, err
	}
	return s, nil
}
