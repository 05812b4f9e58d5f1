package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/toolsearch"
)

// indexCtx is llama-server's context in TestLlamaServer_IndexServesACatalogMaskCannotFit:
// the 500-tool catalog's definitions do not fit it, its index does.
const indexCtx = 32768

// TestLlamaServer_IndexServesACatalogMaskCannotFit replays a profile's sessions over a
// 500-tool catalog on a real llama-server (the tiny random-weight model, one slot, a
// 32,768-token context) under strategy index and under remove, with progressive loading
// and user messages that carry 150 words of pasted log. It first renders the catalog as
// mask would send it, through the server's own template and tokenizer, and requires it to
// overflow the context: mask cannot serve this catalog here. Then:
//
//   - every session completes under both strategies;
//   - each index request that carries loaded tools' definitions is sent to the engine
//     forced to call one of them (tool_choice allowed_tools, required, 512 tokens at
//     most): every such call names a loaded tool, and its arguments validate against
//     that tool's schema (the grammar's copy of the definitions bounds free strings,
//     lists, integers and objects, so that greedy random weights end a value: see
//     forcer);
//   - every prompt index sent has one SHA-256 up to its first user turn (the meta-tools
//     with the catalog's index, the system prompt): loads never moved it;
//   - no request recomputed a token it had already sent: llama-server's cache_n is at
//     least the tokens the prompt shares with the request before it (one slot, so the
//     slot held that request), by the server's own tokenizer;
//   - from the second session on, index computes at most 0.8× the prompt tokens remove
//     computes (the target, 0.35×, is not met by this workload: 0.65× measured;
//     docs/benchmarks.md says why).
func TestLlamaServer_IndexServesACatalogMaskCannotFit(t *testing.T) {
	srv := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{CtxSize: indexCtx, Args: []string{"--threads", "2"}})
	rec := newCompletionRecorder(t, srv.URL)
	c := indexConfig()
	_, ix := indexCatalog(t, c)
	// Mask's prompt: the whole catalog as the tools, through the server's template.
	maskPrompt := rec.applyTemplate(t, `{"messages":[`+string(workload.SystemMessage("Run 000. "))+`,{"role":"user","content":"hi"}],"tools":`+string(ix.Catalog().Render())+`}`)
	be, err := llamacpp.New(llamacpp.Options{Name: "replay", BaseURL: rec.url, Grammar: hermesGrammar()})
	if err != nil {
		t.Fatal(err)
	}
	replayIndex(t, c, indexEngine{
		name: "llama-server", kind: "llamacpp", backend: be, ctx: indexCtx,
		maskTokens: len(rec.tokenize(t, maskPrompt)),
		take:       rec.take, tokenize: func(p string) []int { return rec.tokenize(t, p) },
	})
}

// indexConfig is the replay of the index tests on real engines: 3 sessions of one
// profile over 500 tools, 8 turns each, progressive loading, 150 words of pasted log in
// every user message, index then remove.
func indexConfig() Config {
	return Config{Target: TargetURL, Kind: "llamacpp", Model: "tiny", Seed: 5, Catalogs: []int{500},
		Scenarios: []string{ScenarioProfile}, Sessions: 3, Turns: 8, Gen: 8, Progressive: true, Paste: 150,
		Strategies: []string{string(gateway.StrategyIndex), string(gateway.StrategyRemove)}}.withDefaults()
}

func indexCatalog(t *testing.T, c Config) (*workload.Catalog, *toolsearch.Index) {
	t.Helper()
	cat, err := workload.NewCatalog(workload.CatalogOptions{Tools: c.Catalogs[0], Seed: c.Seed})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := cat.Index()
	if err != nil {
		t.Fatal(err)
	}
	return cat, ix
}

// loaderBackend is an engine's backend that serves index by definition.
type loaderBackend interface {
	backends.Backend
	backends.ToolConstrainer
	backends.ToolLoader
}

// indexEngine is a real engine under the index tests: its backend, its context, mask's
// prompt for the catalog in its tokens, and what it saw of each request in order (the
// rendered prompt and the prompt tokens it reused from its cache).
type indexEngine struct {
	name, kind string
	backend    loaderBackend
	ctx        int
	maskTokens int
	take       func() []recorded
	tokenize   func(prompt string) []int
}

// replayIndex replays c on e and holds what the index tests claim (see
// TestLlamaServer_IndexServesACatalogMaskCannotFit).
func replayIndex(t *testing.T, c Config, e indexEngine) {
	t.Logf("the %d-tool catalog under mask: a %d-token prompt against a %d-token context", c.Catalogs[0], e.maskTokens, e.ctx)
	// The README and docs/benchmarks.md quote 90,575 tokens (the engine's template and
	// tokenizer over the replay's fixed catalog); 5 % either way holds it.
	if e.maskTokens < 86000 || e.maskTokens > 95100 {
		t.Errorf("mask's prompt is %d tokens; the README quotes 90,575", e.maskTokens)
	}
	if e.maskTokens <= e.ctx {
		t.Fatalf("mask's prompt is %d tokens, within the %d-token context: the test needs a catalog mask cannot fit", e.maskTokens, e.ctx)
	}
	if e.backend.LoadsTools() != backends.LoadByDefinition {
		t.Fatalf("the %s backend does not serve index by definition", e.name)
	}
	f := &forcer{inner: e.backend}
	tg := &engineTarget{about: TargetInfo{Name: e.name, Kind: e.kind, Model: "tiny"}, scr: scripted(f, c),
		caps: kvcache.Capabilities{Constrains: true, CachesPrefixes: true, Index: true}}
	rep, err := Replay(context.Background(), c, tg)
	if err != nil {
		t.Fatal(err)
	}
	// Under remove the gateway's progressive loads make no load_tool call, so the
	// scripted model takes its first call to a tool loaded that way for a stray, which
	// the gateway rightly does not count: the engine side's count is held apart.
	sane := *rep
	sane.Runs = nil
	for _, r := range rep.Runs {
		if r.Strategy == string(gateway.StrategyRemove) {
			if r.DisabledMetric != 0 {
				t.Errorf("remove: %d disabled calls counted by the gateway", r.DisabledMetric)
			}
			t.Logf("remove: %d calls the script took for strays, to progressively loaded tools", r.Disabled)
			r.Disabled = r.DisabledMetric
		}
		sane.Runs = append(sane.Runs, r)
	}
	checkSane(t, &sane)
	runs := map[string]*RunResult{}
	for i := range rep.Runs {
		r := &rep.Runs[i]
		runs[r.Strategy] = r
		if r.Served != r.Strategy {
			t.Errorf("%s: the gateway served %q", r.Strategy, r.Served)
		}
		if len(r.Sessions) != c.Sessions {
			t.Errorf("%s: %d sessions completed, want %d", r.Strategy, len(r.Sessions), c.Sessions)
		}
		t.Logf("%s: computed %d in the first session, %.0f a session after; cached %.2f%% after turn 0; last prompt %.0f tokens",
			r.Strategy, r.ComputedFirst, r.ComputedLater, 100*r.HitRateAfterFirst, r.LastPrompt)
	}
	index, remove := runs[string(gateway.StrategyIndex)], runs[string(gateway.StrategyRemove)]

	// Forced calls under index.
	f.mu.Lock()
	t.Logf("forced calls to loaded tools: %d, %d valid", f.forced, f.valid)
	for _, e := range f.errs {
		t.Error(e)
	}
	if f.forced < 2*c.Sessions {
		t.Errorf("%d forced calls to loaded tools; the sessions loaded tools in every session, so at least %d were expected", f.forced, 2*c.Sessions)
	}
	f.mu.Unlock()

	// The prompts: prefix hash, and no token sent twice recomputed. The warm-up session
	// ("Run 000.") comes first; index's run is the first measured ("Run 001.").
	reqs := e.take()
	prefixes := map[[32]byte]int{}
	indexReqs := 0
	var shared, cached int
	for i, r := range reqs {
		if strings.Contains(r.prompt, "Run 001. ") {
			indexReqs++
			head, _, ok := strings.Cut(r.prompt, "<|im_start|>user")
			if !ok {
				t.Fatalf("request %d: no user turn in the prompt", i)
			}
			prefixes[sha256.Sum256([]byte(head))]++
		}
		if i == 0 {
			continue
		}
		prev, cur := e.tokenize(reqs[i-1].prompt), e.tokenize(r.prompt)
		n := 0
		for n < len(prev) && n < len(cur) && prev[n] == cur[n] {
			n++
		}
		if n == len(cur) {
			n-- // a prompt the cache holds whole still evaluates its last token
		}
		shared += n
		cached += r.cacheN
		if r.cacheN < n {
			t.Errorf("request %d: %d tokens reused from the cache, but %d of its %d tokens were in the request before it", i, r.cacheN, n, len(cur))
		}
	}
	t.Logf("%d engine requests (%d under index); %d tokens shared with the request before, %d reused from the cache; %d prompt prefixes under index",
		len(reqs), indexReqs, shared, cached, len(prefixes))
	if indexReqs == 0 || len(prefixes) != 1 {
		t.Errorf("index's prompts had %d different prefixes before the first user turn over %d requests; loads must never move it", len(prefixes), indexReqs)
	}
	if q := index.ComputedLater / remove.ComputedLater; !(q <= 0.8) {
		t.Errorf("from the second session on index computed %.0f tokens a session, remove %.0f: ×%.2f, more than 0.8×", index.ComputedLater, remove.ComputedLater, q)
	} else {
		t.Logf("from the second session on index computed ×%.3f remove's tokens (%.0f against %.0f)", q, index.ComputedLater, remove.ComputedLater)
	}
}

// forcer sends each request that carries loaded tools' definitions (strategy index)
// forced to call one of them, whole, and checks the call the engine made: it names a
// loaded tool and its arguments validate against that tool's schema. Other requests pass
// as they came.
type forcer struct {
	inner         loaderBackend
	mu            sync.Mutex
	forced, valid int
	errs          []string
}

func (f *forcer) ConstrainsTools() bool         { return f.inner.ConstrainsTools() }
func (f *forcer) LoadsTools() backends.LoadKind { return f.inner.LoadsTools() }
func (f *forcer) errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *forcer) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	if len(req.Definitions) == 0 {
		return f.inner.ChatCompletion(ctx, req)
	}
	defs, err := oai.ToolSchemas(req.Definitions)
	if err != nil {
		return nil, err
	}
	// The grammar's copy of the definitions bounds every free value, so that a
	// random-weight model's greedy strings, lists and objects end within max_tokens; a
	// bounded value is valid against the tool's own schema, which the call is checked
	// against. The prompt never holds Definitions: what the engine reads is unchanged.
	sent := *req
	for _, r := range [][2]string{
		{`"type":"string"`, `"type":"string","maxLength":16`},
		{`"type":"array"`, `"type":"array","maxItems":2`},
		{`"type":"integer"`, `"type":"integer","minimum":0,"maximum":99`},
		{`"type":"object","description"`, `"type":"object","properties":{},"additionalProperties":false,"description"`},
	} {
		sent.Definitions = bytes.ReplaceAll(sent.Definitions, []byte(r[0]), []byte(r[1]))
	}
	schemas := map[string][]byte{}
	var names []string
	for _, d := range defs {
		schemas[d.Name] = d.Parameters
		names = append(names, `{"type":"function","function":{"name":`+strconv.Quote(d.Name)+`}}`)
	}
	choice := `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[` + strings.Join(names, ",") + `]}}`
	body, err := oai.Set(req.Body, "tool_choice", []byte(choice))
	if err == nil {
		body, err = oai.Set(body, "stream", []byte("false"))
	}
	if err == nil {
		body, err = oai.Set(body, "max_tokens", []byte("512"))
	}
	if err == nil {
		body, err = oai.Set(body, "parallel_tool_calls", []byte("false"))
	}
	if err == nil {
		body, err = oai.Delete(body, "stream_options")
	}
	if err != nil {
		return nil, err
	}
	sent.Body, sent.Stream = body, false
	resp, err := f.inner.ChatCompletion(ctx, &sent)
	if err != nil {
		return nil, err
	}
	var cc oai.ChatCompletion
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forced++
	if err := json.Unmarshal(resp.Body, &cc); err != nil || len(cc.Choices) == 0 {
		f.errorf("forced call %d: answer %s: %v", f.forced, resp.Body, err)
		return resp, nil
	}
	ch := cc.Choices[0]
	if len(ch.Message.ToolCalls) != 1 {
		f.errorf("forced call %d: %d calls, finish %q, content %v", f.forced, len(ch.Message.ToolCalls), ch.FinishReason, ch.Message.Content)
		return resp, nil
	}
	call := ch.Message.ToolCalls[0].Function
	schema, ok := schemas[call.Name]
	if !ok {
		f.errorf("forced call %d: called %q, not a loaded tool (loaded: %v)", f.forced, call.Name, req.Allowed)
		return resp, nil
	}
	if err := schemacheck.Validate(schema, []byte(call.Arguments)); err != nil {
		f.errorf("forced call %d: %s(%s), finish %q: %v", f.forced, call.Name, call.Arguments, ch.FinishReason, err)
		return resp, nil
	}
	f.valid++
	return resp, nil
}

// completionRecorder stands between the backend and llama-server and keeps every
// /completion request's prompt with the cache_n llama-server answered.
type completionRecorder struct {
	url, engine string
	mu          sync.Mutex
	reqs        []recorded
	toks        map[string][]int
}

type recorded struct {
	prompt string
	cacheN int
}

var cacheN = regexp.MustCompile(`"cache_n":\s*(\d+)`)

func newCompletionRecorder(t *testing.T, engine string) *completionRecorder {
	target, err := url.Parse(engine)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = enginetest.ProxyTransport()
	rec := &completionRecorder{engine: engine, toks: map[string][]int{}}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/completion" {
			proxy.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		cw := &capture{ResponseWriter: w}
		proxy.ServeHTTP(cw, r)
		var p struct {
			Prompt string `json:"prompt"`
		}
		_ = json.Unmarshal(body, &p)
		n := -1
		if m := cacheN.FindAllSubmatch(cw.buf.Bytes(), -1); len(m) > 0 {
			n, _ = strconv.Atoi(string(m[len(m)-1][1]))
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{p.Prompt, n})
		rec.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	rec.url = s.URL
	return rec
}

// capture keeps a copy of what it writes; it flushes, so streams still stream.
type capture struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (c *capture) Write(b []byte) (int, error) {
	c.buf.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rec *completionRecorder) take() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.reqs
	rec.reqs = nil
	return out
}

func (rec *completionRecorder) post(t *testing.T, path, body string, out any) {
	t.Helper()
	cl := &http.Client{Timeout: 2 * time.Minute}
	resp, err := cl.Post(rec.engine+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func (rec *completionRecorder) applyTemplate(t *testing.T, body string) string {
	var out struct {
		Prompt string `json:"prompt"`
	}
	rec.post(t, "/apply-template", body, &out)
	return out.Prompt
}

// tokenize is the server's tokens of prompt, as /completion tokenizes a prompt string.
func (rec *completionRecorder) tokenize(t *testing.T, prompt string) []int {
	rec.mu.Lock()
	tk, ok := rec.toks[prompt]
	rec.mu.Unlock()
	if ok {
		return tk
	}
	body, _ := json.Marshal(map[string]any{"content": prompt, "add_special": true, "parse_special": true})
	var out struct {
		Tokens []int `json:"tokens"`
	}
	rec.post(t, "/tokenize", string(body), &out)
	rec.mu.Lock()
	rec.toks[prompt] = out.Tokens
	rec.mu.Unlock()
	return out.Tokens
}
