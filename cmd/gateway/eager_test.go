package main

// Small catalogs through the binary as configured: the README's own example, and a
// profile's few tools under each strategy, over a stand-in for llama-server.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/gbnftest"
)

// fakeLlama stands in for llama-server's documented API (tools/server/README.md): GET
// /props with a Hermes chat template, POST /apply-template → {"prompt"}, POST
// /completion answering "ok", GET /health and /v1/models. It keeps the bodies of
// /apply-template and /completion.
type fakeLlama struct {
	*httptest.Server
	mu        sync.Mutex
	templated [][]byte // /apply-template bodies
	completed [][]byte // /completion bodies
}

func newFakeLlama(t *testing.T) *fakeLlama {
	t.Helper()
	f := &fakeLlama{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/props":
			io.WriteString(w, `{"chat_template":"{%- for tool in tools %}{{ tool | tojson }}{% endfor %}<tool_call>{{ messages }}</tool_call>","total_slots":1}`)
		case "/health":
			io.WriteString(w, `{"status":"ok"}`)
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"qwen2.5-7b","object":"model"}]}`)
		case "/apply-template":
			f.mu.Lock()
			f.templated = append(f.templated, body)
			f.mu.Unlock()
			io.WriteString(w, `{"prompt":"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"}`)
		case "/completion":
			f.mu.Lock()
			f.completed = append(f.completed, body)
			f.mu.Unlock()
			io.WriteString(w, `{"index":0,"content":"ok","tokens":[],"id_slot":0,"stop":true,"model":"m.gguf","stop_type":"eos","truncated":false,"tokens_predicted":1,"tokens_evaluated":12,"timings":{"cache_n":0,"prompt_n":12,"predicted_n":1}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// last is the engine's view of the latest request: the tools /apply-template was given
// (names, and descriptions by name) and the tool names /completion's grammar allows (nil
// without a grammar).
func (f *fakeLlama) last(t *testing.T) (names []string, descs map[string]string, grammar []string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.templated) == 0 || len(f.completed) == 0 {
		t.Fatalf("the engine got %d /apply-template and %d /completion requests", len(f.templated), len(f.completed))
	}
	var applied struct {
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(f.templated[len(f.templated)-1], &applied); err != nil {
		t.Fatalf("/apply-template body: %v", err)
	}
	descs = map[string]string{}
	for _, tl := range applied.Tools {
		names = append(names, tl.Function.Name)
		descs[tl.Function.Name] = tl.Function.Description
	}
	var completion struct {
		Grammar string `json:"grammar"`
	}
	if err := json.Unmarshal(f.completed[len(f.completed)-1], &completion); err != nil {
		t.Fatalf("/completion body: %v", err)
	}
	if completion.Grammar != "" {
		var err error
		if grammar, err = gbnftest.ToolNames(completion.Grammar); err != nil {
			t.Fatalf("the grammar's names: %v\n%s", err, completion.Grammar)
		}
		slices.Sort(grammar)
	}
	return names, descs, grammar
}

// runConfig runs the gateway on the config file at path, as `gateway -config path`
// does, on a free loopback port, until the test ends; it returns the base URL.
func runConfig(t *testing.T, path string) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	stderr := &syncBuffer{}
	go func() {
		done <- run(ctx, []string{"-config", path, "-listen", addr}, func(string) string { return "" }, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // a bound on a hang, not a timing
			t.Errorf("run did not return 30s after its context ended")
		}
	})
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a timing
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return "http://" + addr, stderr
		}
		select {
		case code := <-done:
			t.Fatalf("the gateway exited %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not serve: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// chatTo posts a Chat Completions body and returns the status, the strategy header and
// the body.
func chatTo(t *testing.T, base, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Maskgate-Strategy"), string(out)
}

// TestREADME_ExampleConfigSendsItsCatalog runs the README's command as written — `gateway
// -config examples/gateway.yaml`, the file as it is with its relative tools path, only
// llama-server's url pointed at a stand-in — and sends a chat with no tools: the example's
// catalog is under eager_below, so the engine gets every tool of
// examples/tools/catalog.json and the gateway says eager.
func TestREADME_ExampleConfigSendsItsCatalog(t *testing.T) {
	engine := newFakeLlama(t)
	example, err := os.ReadFile("../../examples/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const llamaURL = "url: http://127.0.0.1:8080"
	if strings.Count(string(example), llamaURL) != 1 {
		t.Fatalf("examples/gateway.yaml has no single %q to point at the stand-in", llamaURL)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(example), llamaURL, "url: "+engine.URL, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The config's tools path, relative to the file, reaches the example's own folder.
	tools, err := filepath.Abs("../../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tools, filepath.Join(dir, "tools")); err != nil {
		t.Fatal(err)
	}
	var catalog []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	raw, err := os.ReadFile("../../examples/tools/catalog.json")
	if err != nil || json.Unmarshal(raw, &catalog) != nil || len(catalog) == 0 {
		t.Fatalf("examples/tools/catalog.json: %v", err)
	}
	var want []string
	for _, tl := range catalog {
		want = append(want, tl.Function.Name)
	}
	base, logs := runConfig(t, cfg)
	code, strategy, body := chatTo(t, base, `{"model":"qwen2.5-7b","messages":[{"role":"user","content":"Schedule a meeting with Ana tomorrow at 10."}]}`)
	if code != 200 {
		t.Fatalf("%d %s\n%s", code, body, logs.String())
	}
	names, _, _ := engine.last(t)
	slices.Sort(want) // the catalog renders in its own fixed order
	if got := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Errorf("the engine got tools %v, want the example catalog's %v", names, want)
	}
	if strategy != "eager" {
		t.Errorf("X-Maskgate-Strategy %q, want eager", strategy)
	}
}

// sixTools is a profile of six tools, the third overridden and, for metadata.plan pro,
// given a variant.
const sixTools = `backends:
  - {name: llama, kind: llamacpp, url: 'URL', models: ['*']}
profiles:
  - name: default
    tools:
      inline:
%s      overrides:
        - tool: six_02
          description: Overridden for every request.
          variants:
            - when: {field: metadata.plan, equals: pro}
              description: The pro plan's own.
%s`

func sixToolsConfig(t *testing.T, url, extra string) string {
	t.Helper()
	var inline strings.Builder
	for i := range 6 {
		fmt.Fprintf(&inline, "        - {type: function, function: {name: six_%02d, description: Tool %d of six., parameters: {type: object, properties: {x: {type: string}}}}}\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "gw.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(fmt.Sprintf(sixTools, inline.String(), extra), "URL", url, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var sixNames = []string{"six_00", "six_01", "six_02", "six_03", "six_04", "six_05"}

// TestProfile_SixToolsEagerSendsThemAllWithOverrideAndVariant: strategy eager on a
// profile of six tools sends all six, no meta-tools, each callable (the grammar names
// them), the override's description, and the variant's where the request matches it.
func TestProfile_SixToolsEagerSendsThemAllWithOverrideAndVariant(t *testing.T) {
	engine := newFakeLlama(t)
	base, logs := runConfig(t, sixToolsConfig(t, engine.URL, "    strategy: eager\n"))
	for _, tc := range []struct{ plan, desc string }{
		{"free", "Overridden for every request."},
		{"pro", "The pro plan's own."},
	} {
		code, strategy, body := chatTo(t, base, `{"model":"m","metadata":{"plan":"`+tc.plan+`"},"messages":[{"role":"user","content":"hi"}]}`)
		if code != 200 {
			t.Fatalf("%d %s\n%s", code, body, logs.String())
		}
		names, descs, grammar := engine.last(t)
		if !slices.Equal(names, sixNames) {
			t.Errorf("plan %s: the engine got tools %v, want %v", tc.plan, names, sixNames)
		}
		if !slices.Equal(grammar, sixNames) {
			t.Errorf("plan %s: the grammar allows %v, want %v", tc.plan, grammar, sixNames)
		}
		if descs["six_02"] != tc.desc || descs["six_01"] != "Tool 1 of six." {
			t.Errorf("plan %s: six_02 %q, six_01 %q; want %q and the tool's own", tc.plan, descs["six_02"], descs["six_01"], tc.desc)
		}
		if strategy != "eager" {
			t.Errorf("plan %s: X-Maskgate-Strategy %q, want eager", tc.plan, strategy)
		}
	}
}

// TestProfile_SixToolsMaskWinsOverEagerBelow: strategy mask on a profile of six tools
// (under the default eager_below of 20) is mask: the meta-tools and the six in the
// prompt, and a grammar that allows only the meta-tools, nothing being loaded yet.
func TestProfile_SixToolsMaskWinsOverEagerBelow(t *testing.T) {
	engine := newFakeLlama(t)
	base, logs := runConfig(t, sixToolsConfig(t, engine.URL, "    strategy: mask\n"))
	code, strategy, body := chatTo(t, base, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 {
		t.Fatalf("%d %s\n%s", code, body, logs.String())
	}
	names, _, grammar := engine.last(t)
	if want := append([]string{"search_tools", "load_tool"}, sixNames...); !slices.Equal(names, want) {
		t.Errorf("the engine got tools %v, want %v", names, want)
	}
	if want := []string{"load_tool", "search_tools"}; !slices.Equal(grammar, want) {
		t.Errorf("the grammar allows %v, want %v", grammar, want)
	}
	if strategy != "mask" {
		t.Errorf("X-Maskgate-Strategy %q, want mask", strategy)
	}
}

// TestProfile_EagerBelowZeroLeavesAutoToDecide: with eager_below: 0 a profile of six
// tools under strategy auto is not eager for its size: auto's cost model decides (its
// selected-strategy metric appears, and the header says what it chose), where with
// eager_below unset the size decides and the cost model is not asked.
func TestProfile_EagerBelowZeroLeavesAutoToDecide(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		asked       bool
	}{
		{"unset", "", false},
		{"zero", "    search: {eager_below: 0}\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engine := newFakeLlama(t)
			base, logs := runConfig(t, sixToolsConfig(t, engine.URL, tc.extra))
			code, strategy, body := chatTo(t, base, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if code != 200 {
				t.Fatalf("%d %s\n%s", code, body, logs.String())
			}
			chosen := ""
			metrics := get(t, base+"/metrics")
			for _, s := range []string{"eager", "mask", "allowed_tools", "remove", "validate"} {
				if slices.Contains(strings.Split(metrics, "\n"), `maskgate_auto_strategy_selected{backend="llama",profile="default",strategy="`+s+`"} 1`) {
					chosen = s
				}
			}
			names, _, _ := engine.last(t)
			if !tc.asked {
				if chosen != "" || strategy != "eager" || !slices.Equal(names, sixNames) {
					t.Errorf("eager_below unset: auto chose %q, header %q, tools %v; want no choice, eager and the six", chosen, strategy, names)
				}
				return
			}
			t.Logf("eager_below 0: auto chose %s; the engine got %v", chosen, names)
			if chosen == "" || strategy != chosen {
				t.Errorf("eager_below 0: auto chose %q, header %q; want the header to say auto's choice", chosen, strategy)
			}
			if strategy != "eager" && !slices.Contains(names, "search_tools") {
				t.Errorf("under %s the engine got no meta-tools: %v", strategy, names)
			}
		})
	}
}
