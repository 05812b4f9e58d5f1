package llamacpp

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// testPrompt is what the fake renders for every conversation.
const testPrompt = "<|im_start|>system\n# Tools\n<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"

// fakeServer imitates llama-server's documented API (tools/server/README.md): POST
// /apply-template → {"prompt"}, POST /completion whole or as SSE events ending with
// "stop": true, POST /tokenize, GET /props, GET /v1/models, GET /health. It records the
// bodies it was sent.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][][]byte

	pieces   []string // the completion text, one streamed event each
	final    string   // members of the last event / whole answer after content
	truncate bool     // end the stream before the "stop": true event
	block    bool     // /completion waits for the client to go away
	status   int      // when set, every POST answers this status
	errBody  string
	tokens   string        // the /tokenize answer
	props    string        // the /props answer
	prompt   string        // the /apply-template answer; testPrompt when empty
	gone     chan struct{} // closed when a blocked /completion saw its client go away
	started  chan struct{} // closed when a blocked /completion has sent its headers
}

const defaultFinal = `"stop_type":"eos","truncated":false,"tokens_predicted":9,"tokens_evaluated":120,"tokens_cached":129,"timings":{"cache_n":100,"prompt_n":20,"predicted_n":9}`

func newFake(t *testing.T, pieces ...string) *fakeServer {
	t.Helper()
	f := &fakeServer{bodies: map[string][][]byte{}, pieces: pieces, final: defaultFinal,
		gone: make(chan struct{}), started: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies[r.URL.Path] = append(f.bodies[r.URL.Path], body)
	f.mu.Unlock()
	if r.Method == http.MethodPost && f.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		io.WriteString(w, f.errBody)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/health":
		io.WriteString(w, `{"status":"ok"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen3-4b.gguf","object":"model","owned_by":"llamacpp"}]}`)
	case r.Method == http.MethodPost && r.URL.Path == "/tokenize":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, f.tokens)
	case r.Method == http.MethodGet && r.URL.Path == "/props":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, f.props)
	case r.Method == http.MethodPost && r.URL.Path == "/apply-template":
		w.Header().Set("Content-Type", "application/json")
		prompt := f.prompt
		if prompt == "" {
			prompt = testPrompt
		}
		json.NewEncoder(w).Encode(map[string]string{"prompt": prompt})
	case r.Method == http.MethodPost && r.URL.Path == "/completion":
		var req struct {
			Stream bool `json:"stream"`
		}
		json.Unmarshal(body, &req)
		if req.Stream {
			f.stream(w, r)
			return
		}
		content, _ := json.Marshal(strings.Join(f.pieces, ""))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"index":0,"content":%s,"tokens":[],"id_slot":0,"stop":true,"model":"qwen3-4b.gguf",%s}`, content, f.final)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for i, p := range f.pieces {
		content, _ := json.Marshal(p)
		fmt.Fprintf(w, "data: {\"index\":0,\"content\":%s,\"tokens\":[%d],\"stop\":false,\"id_slot\":0,\"tokens_predicted\":%d,\"tokens_evaluated\":120}\n\n", content, i, i+1)
		rc.Flush()
	}
	if f.block {
		close(f.started)
		select {
		case <-r.Context().Done():
			close(f.gone)
		case <-time.After(10 * time.Second):
		}
		return
	}
	if f.truncate {
		return
	}
	fmt.Fprintf(w, "data: {\"index\":0,\"content\":\"\",\"tokens\":[],\"stop\":true,\"id_slot\":0,\"model\":\"qwen3-4b.gguf\",%s}\n\n", f.final)
	rc.Flush()
}

func (f *fakeServer) last(path string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.bodies[path]
	if len(b) == 0 {
		return nil
	}
	return b[len(b)-1]
}

// fakeGrammar stands in for masking's GBNF generator: fixed members that name their
// arguments (the tools by their length, the ID as it came), so the golden files show
// what reached it.
func fakeGrammar(r GrammarRequest) (json.RawMessage, error) {
	g := fmt.Sprintf("root ::= call # allowed=%s required=%v tools=%dB id=%q", strings.Join(r.Allowed, ","), r.Required, len(r.Tools), r.ToolsID)
	q, _ := json.Marshal(g)
	return json.RawMessage(`{"grammar":` + string(q) + `,"grammar_lazy":` + fmt.Sprint(!r.Required) +
		`,"grammar_triggers":[{"type":1,"value":"<tool_call>"}],"preserved_tokens":["<tool_call>","</tool_call>"]}`), nil
}

// newTestBackend returns a backend of f with a fixed clock and numbered ids.
func newTestBackend(t *testing.T, url string, grammar GrammarFunc) *Backend {
	t.Helper()
	return newFormatBackend(t, url, "", grammar)
}

// newFormatBackend is newTestBackend for a tool-call wire format.
func newFormatBackend(t *testing.T, url, format string, grammar GrammarFunc) *Backend {
	t.Helper()
	b, err := New(Options{Name: "llama", BaseURL: url, Grammar: grammar, Format: format,
		Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := map[string]int{}
	b.newID = func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n[prefix]++
		return fmt.Sprintf("%s%d", prefix, n[prefix])
	}
	return b
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

func background(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
