package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// These tests run the whole path a user runs: the official Go SDK → the gateway, started
// by run() from a YAML config → a real llama-server (built from llama.cpp's source by
// scripts/build-llama-server.sh) serving the tiny random-weight model with --jinja. A
// recording proxy between gateway and engine keeps what crossed the wire, so the tests
// can check the engine's own view (the rendered prompt, the grammar, cache_n) against
// their own expectations.

// e2eCatalog is a 24-tool catalog (managed: 20 or more) whose misc_tool_NN names share
// long prefixes, with small schemas a grammar can hold a random model to.
func e2eCatalog() []byte {
	var tools []string
	add := func(name, desc, params string) {
		tools = append(tools, fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":%q,"parameters":%s}}`, name, desc, params))
	}
	for i := range 20 {
		add(fmt.Sprintf("misc_tool_%02d", i), fmt.Sprintf("Miscellaneous operation number %d.", i),
			`{"type":"object","properties":{"level":{"type":"integer"},"mode":{"type":"string","enum":["fast","slow"]}},"required":["mode"]}`)
	}
	add("slack_send_message", "Send a message to a Slack channel.",
		`{"type":"object","properties":{"channel":{"type":"string","maxLength":12},"urgent":{"type":"boolean"}},"required":["channel"]}`)
	add("github_create_issue", "Open a new issue in a GitHub repository.",
		`{"type":"object","properties":{"title":{"type":"string","maxLength":16}},"required":["title"]}`)
	add("calendar_create_event", "Create a calendar event.",
		`{"type":"object","properties":{"day":{"type":"integer"}},"required":["day"]}`)
	add("get_weather", "Current weather for a city.",
		`{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"]}`)
	return []byte("[" + strings.Join(tools, ",\n") + "]\n")
}

// wireCall is one request the gateway sent the engine, and the engine's answer.
type wireCall struct {
	seq          int // the order in which requests arrived
	method, path string
	req, resp    []byte
}

// wireLog records what crosses a recordingProxy.
type wireLog struct {
	mu    sync.Mutex
	next  int
	calls []wireCall
}

// arrive numbers a request as it arrives; the exchange is logged when it ends.
func (l *wireLog) arrive() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	return l.next - 1
}

func (l *wireLog) add(c wireCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

// since returns the exchanges with path of the requests that arrived from number from on.
func (l *wireLog) since(from int, path string) []wireCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []wireCall
	for _, c := range l.calls {
		if c.seq >= from && c.path == path {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b wireCall) int { return a.seq - b.seq })
	return out
}

// await is since, waiting up to 10s for n exchanges: the proxy logs one after its last
// byte, which the gateway may have read and acted on already.
func (l *wireLog) await(t *testing.T, from int, path string, n int) []wireCall {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := l.since(from, path)
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d calls to %s recorded, want %d", len(got), path, n)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitSome is since, waiting up to 10s for at least one exchange (nil if none came):
// as with await, the proxy logs an exchange after its last byte.
func (l *wireLog) awaitSome(from int, path string) []wireCall {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := l.since(from, path); len(got) > 0 || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// len is the number of requests that have arrived.
func (l *wireLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// recordingProxy forwards to target byte for byte, flushing as it goes (streams stay
// streams), and logs each exchange. An upstream that breaks mid-answer breaks the
// proxy's answer too, rather than ending it cleanly.
func recordingProxy(t *testing.T, target string) (*httptest.Server, *wireLog) {
	log := &wireLog{}
	client := &http.Client{Transport: enginetest.ProxyTransport()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := log.arrive()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		relay(w, r, body, target, client, func(got []byte) {
			log.add(wireCall{seq: seq, method: r.Method, path: r.URL.Path, req: body, resp: got})
		})
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// relay sends r, whose body was read as body, to target and copies the answer back byte
// for byte, flushing as it goes. record, when not nil, gets the answer's bytes once the
// exchange ends, whole or cut: the gateway may read an answer's last event and hang up
// (its client went away) before the engine's end of stream reaches the proxy, and that
// exchange happened all the same. An unreachable target gets the client a 502 and
// records nothing; an upstream that breaks mid-answer, or a client that hangs up, aborts
// the relayed answer rather than ending it cleanly.
func relay(w http.ResponseWriter, r *http.Request, body []byte, target string, client *http.Client, record func(answer []byte)) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header = r.Header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	var got bytes.Buffer
	if record != nil {
		defer func() { record(got.Bytes()) }()
	}
	buf := make([]byte, 32<<10)
	rc := http.NewResponseController(w)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			got.Write(buf[:n])
			if _, werr := w.Write(buf[:n]); werr != nil {
				panic(http.ErrAbortHandler)
			}
			_ = rc.Flush()
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// startGateway runs the gateway with config yaml, where each name in files is replaced
// by the path of a file holding its bytes, and returns its base URL and its log.
func startGateway(t *testing.T, yaml string, files map[string][]byte) (string, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		yaml = strings.ReplaceAll(yaml, name, path)
	}
	g := startRun(t, yaml, nil)
	return "http://" + g.addr, g.stderr
}

func sdkClient(base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

// tokenize counts prompt's tokens with the engine itself, as the test's own measure.
func tokenize(t *testing.T, ls *enginetest.LlamaServer, prompt string) []int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"content": prompt, "add_special": true})
	resp, err := http.Post(ls.URL+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Tokens
}

func appliedPrompt(t *testing.T, c wireCall) string {
	t.Helper()
	var out struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(c.resp, &out); err != nil {
		t.Fatalf("/apply-template answer %.300s: %v", c.resp, err)
	}
	return out.Prompt
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

const e2eConfig = `backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
tools:
  files: ["catalog.json"]
search:
  mode: client
strategy: mask
`

func TestLlamaServerE2E(t *testing.T) {
	ls := enginetest.Llama(t)
	proxy, wire := recordingProxy(t, ls.URL)
	base, logs := startGateway(t, strings.Replace(e2eConfig, "URL", proxy.URL, 1), map[string][]byte{"catalog.json": e2eCatalog()})
	client := sdkClient(base)
	ctx := t.Context()

	t.Run("format_detected_from_props", func(t *testing.T) {
		// No format: in the config, so the gateway read the chat template from /props at
		// start; Hermes is one the grammar can express, so managed requests are masked.
		if got := wire.await(t, 0, "/props", 1); len(got) == 0 {
			t.Fatalf("the gateway never asked GET /props; log:\n%s", logs.String())
		}
		var httpResp *http.Response
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:     ls.Model,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
			MaxTokens: openai.Int(2),
		}, option.WithResponseInto(&httpResp))
		if err != nil {
			t.Fatal(err)
		}
		if got := httpResp.Header.Get(gateway.HeaderStrategy); got != string(gateway.StrategyMask) {
			t.Errorf("%s = %q, want mask (format detected as constrainable)", gateway.HeaderStrategy, got)
		}
	})

	t.Run("whole_answer_usage_is_the_engines_cache", func(t *testing.T) {
		system := openai.SystemMessage("You are a careful assistant. " + strings.Repeat("Answer briefly and to the point. ", 40))
		var prompts [][]int
		var usages []openai.CompletionUsage
		for _, q := range []string{"What is two plus two?", "Name a colour."} {
			from := wire.len()
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:     ls.Model,
				Messages:  []openai.ChatCompletionMessageParamUnion{system, openai.UserMessage(q)},
				MaxTokens: openai.Int(4),
				Seed:      openai.Int(1),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) != 1 || (resp.Choices[0].FinishReason != "length" && resp.Choices[0].FinishReason != "stop") {
				t.Fatalf("choices %+v, want one that stopped or ran out of tokens", resp.Choices)
			}
			applied := wire.await(t, from, "/apply-template", 1)
			prompts = append(prompts, tokenize(t, ls, appliedPrompt(t, applied[0])))
			usages = append(usages, resp.Usage)
		}
		for i, u := range usages {
			if int(u.PromptTokens) != len(prompts[i]) {
				t.Errorf("request %d: prompt_tokens %d, the engine tokenizes the prompt to %d", i, u.PromptTokens, len(prompts[i]))
			}
		}
		shared := commonPrefix(prompts[0], prompts[1])
		cached := int(usages[1].PromptTokensDetails.CachedTokens)
		// llama-server reuses the common prefix and recomputes at least the last token.
		if cached > shared || cached < shared-1 || shared < 1000 {
			t.Errorf("second request: cached %d, the prompts share %d tokens (of %d); want all but at most one reused", cached, shared, len(prompts[1]))
		}
		t.Logf("two prompts of %d and %d tokens sharing %d; the second reported %d cached", len(prompts[0]), len(prompts[1]), shared, cached)
	})

	t.Run("stream_ends_with_usage", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         ls.Model,
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens:     openai.Int(12),
			Seed:          openai.Int(2),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		chunks, finishes := 0, 0
		for stream.Next() {
			c := stream.Current()
			acc.AddChunk(c)
			chunks++
			for _, ch := range c.Choices {
				if ch.FinishReason != "" {
					finishes++
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		if finishes != 1 {
			t.Errorf("%d chunks carried a finish_reason, want exactly 1", finishes)
		}
		if acc.Usage.CompletionTokens < 1 || acc.Usage.CompletionTokens > 12 || acc.Usage.PromptTokens < 1000 {
			t.Errorf("usage %+v, want 1-12 completion tokens of a 1000+ token prompt (the catalog)", acc.Usage)
		}
		t.Logf("%d chunks, usage %d prompt / %d cached / %d completion", chunks, acc.Usage.PromptTokens, acc.Usage.PromptTokensDetails.CachedTokens, acc.Usage.CompletionTokens)
	})

	t.Run("mask_forced_calls_name_only_loaded_tools_on_one_prefix", func(t *testing.T) {
		catalog := e2eCatalog()
		var all []string
		var parsed []struct {
			Function struct {
				Name       string
				Parameters json.RawMessage
			} `json:"function"`
		}
		if err := json.Unmarshal(catalog, &parsed); err != nil {
			t.Fatal(err)
		}
		schemas := map[string][]byte{}
		for _, p := range parsed {
			all = append(all, p.Function.Name)
			schemas[p.Function.Name] = p.Function.Parameters
		}
		sets := [][]string{
			{"misc_tool_01"},
			{"misc_tool_10", "misc_tool_11"},
			{"slack_send_message", "misc_tool_12"},
			{"get_weather", "calendar_create_event", "misc_tool_03"},
		}
		const perSet = 3
		var (
			counts          struct{ allowed, cut, disabled, noCall int }
			promptsByTokens [][]int
			cachedAfter     []int
		)
		for i := range len(sets) * perSet {
			loaded := sets[i/perSet]
			from := wire.len()
			body := forcedAmongLoaded(ls.Model, loaded, 128, i)
			resp, raw := postJSON(t, base+"/v1/chat/completions", body)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %d %s", i, resp.StatusCode, raw)
			}
			calls, finish := answerCalls(t, raw)
			if len(calls) != 1 {
				counts.noCall++
				t.Errorf("seed %d: a forced call with parallel_tool_calls false came back as %d calls (finish %q): %.300s", i, len(calls), finish, raw)
			}
			for _, c := range calls {
				n := c[0]
				switch {
				case !slices.Contains(loaded, n):
					counts.disabled++
					t.Errorf("seed %d: called %q, loaded %v", i, n, loaded)
				case finish == "length":
					counts.cut++ // the name is whole: a cut in it leaves no call
				default:
					counts.allowed++
					if err := schemacheck.Validate(schemas[n], []byte(c[1])); err != nil {
						t.Errorf("seed %d: %s(%s) does not validate: %v", i, n, c[1], err)
					}
				}
			}
			// The grammar that reached the engine names exactly the loaded tools.
			comps := wire.await(t, from, "/completion", 1)
			var sent struct {
				Grammar     string `json:"grammar"`
				GrammarLazy bool   `json:"grammar_lazy"`
			}
			if err := json.Unmarshal(comps[0].req, &sent); err != nil {
				t.Fatal(err)
			}
			callable, err := gbnftest.ToolNames(sent.Grammar)
			if err != nil {
				t.Fatalf("seed %d: the grammar's tool rule: %v", i, err)
			}
			for _, n := range all {
				if has := slices.Contains(callable, n); has != slices.Contains(loaded, n) {
					t.Errorf("seed %d: grammar names %q: %v; loaded %v", i, n, has, loaded)
				}
			}
			if sent.GrammarLazy {
				t.Errorf("seed %d: a required call's grammar is lazy", i)
			}
			applied := wire.await(t, from, "/apply-template", 1)
			promptsByTokens = append(promptsByTokens, tokenize(t, ls, appliedPrompt(t, applied[0])))
			var u struct {
				Usage struct {
					PromptTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			}
			_ = json.Unmarshal(raw, &u)
			cachedAfter = append(cachedAfter, u.Usage.PromptTokensDetails.CachedTokens)
		}
		// Every prompt starts with the same catalog tokens, whatever is loaded.
		shared := promptsByTokens[0]
		for _, p := range promptsByTokens[1:] {
			shared = shared[:commonPrefix(shared, p)]
		}
		catalogTokens := len(tokenize(t, ls, string(catalogRender(t, wire))))
		if len(shared) < catalogTokens {
			t.Errorf("the prompts share %d tokens, fewer than the catalog's %d: the loaded set moved the prefix", len(shared), catalogTokens)
		}
		var cached, total int
		for i := 1; i < len(promptsByTokens); i++ {
			cached += cachedAfter[i]
			total += len(promptsByTokens[i])
			if cachedAfter[i] < len(shared)-1 {
				t.Errorf("seed %d: cached %d, the shared prefix is %d tokens", i, cachedAfter[i], len(shared))
			}
		}
		if counts.allowed < len(sets)*perSet/2 {
			t.Errorf("only %d of %d forced calls completed within max_tokens: the arguments' grammar should end most", counts.allowed, len(sets)*perSet)
		}
		rate := float64(cached) / float64(total)
		// docs/benchmarks.md: every call named a loaded tool, every prompt shared its
		// first 2,219 tokens, and 99.4 % of prompt tokens were cached after the first
		// request. Held exactly, as quoted: llama-server decodes on one thread with
		// seeded sampling over the seeded model, the prompts are the test's, and two
		// runs counted the same.
		if counts.allowed != len(sets)*perSet || len(shared) != 2219 || fmt.Sprintf("%.1f", 100*rate) != "99.4" {
			t.Errorf("%d of %d calls whole to a loaded tool, prompts sharing %d tokens, %d of %d prompt tokens cached after the first request (%.2f%%); the docs quote all, 2,219 and 99.4 %%",
				counts.allowed, len(sets)*perSet, len(shared), cached, total, 100*rate)
		}
		t.Logf("%d forced calls over %d loaded sets: %d whole calls to a loaded tool with valid arguments, %d to a loaded tool cut by max_tokens in the arguments, %d disabled, %d not one call; every prompt shares %d tokens (catalog %d); %.1f%% of prompt tokens cached after the first",
			len(sets)*perSet, len(sets), counts.allowed, counts.cut, counts.disabled, counts.noCall, len(shared), catalogTokens, 100*rate)
	})
}

// catalogRender is the catalog part of the first recorded prompt: from its start to the
// end of the tools block, which every managed request renders the same.
func catalogRender(t *testing.T, wire *wireLog) []byte {
	t.Helper()
	applied := wire.since(0, "/apply-template")
	for _, c := range applied {
		p := appliedPrompt(t, c)
		// The template names the tags in its preamble too; the block ends at the last.
		if i := strings.LastIndex(p, "</tools>"); i >= 0 {
			return []byte(p[:i+len("</tools>")])
		}
	}
	t.Fatal("no recorded prompt holds a tools block")
	return nil
}

// forcedAmongLoaded is a client-mode request whose history loaded names (a load_tool call
// and its result, from which client mode derives the loaded set), forcing a call
// among them with allowed_tools.
func forcedAmongLoaded(model string, names []string, maxTokens, seed int) string {
	choice := make([]string, len(names))
	quoted := make([]string, len(names))
	for i, n := range names {
		choice[i] = fmt.Sprintf(`{"type":"function","function":{"name":%q}}`, n)
		quoted[i] = fmt.Sprintf("%q", n)
	}
	args, _ := json.Marshal(fmt.Sprintf(`{"toolNames":[%s]}`, strings.Join(quoted, ",")))
	return fmt.Sprintf(`{"model":%q,"messages":[`+
		`{"role":"system","content":"You are an agent with tools."},`+
		`{"role":"user","content":"Load what you need."},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_load","type":"function","function":{"name":"load_tool","arguments":%s}}]},`+
		`{"role":"tool","tool_call_id":"call_load","content":"{\"loaded\":[%s]}"},`+
		`{"role":"user","content":"Now do it."}],`+
		`"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[%s]}},"parallel_tool_calls":false,"max_tokens":%d,"seed":%d,"temperature":1.0}`,
		model, args, strings.ReplaceAll(strings.Join(quoted, ","), `"`, `\"`), strings.Join(choice, ","), maxTokens, seed)
}

func postJSON(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// answerCalls reads the calls (name and arguments) and the finish reason of a whole
// answer.
func answerCalls(t *testing.T, raw []byte) ([][2]string, string) {
	t.Helper()
	var c struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("answer %.300s: %v", raw, err)
	}
	var calls [][2]string
	for _, tc := range c.Choices[0].Message.ToolCalls {
		calls = append(calls, [2]string{tc.Function.Name, tc.Function.Arguments})
	}
	return calls, c.Choices[0].FinishReason
}

// A llama-server that dies mid-stream ends the client's stream with an error, soon, and
// the gateway goes on serving: no hang, no clean-looking end of a cut answer.
func TestLlamaServerE2E_KilledMidStream(t *testing.T) {
	ls := enginetest.Llama(t)
	base, logs := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
`, "URL", ls.URL, 1), nil)
	client := sdkClient(base)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:     ls.Model,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write a very long story.")},
		MaxTokens: openai.Int(100000),
		Seed:      openai.Int(3),
	})
	chunks := 0
	killedAt := time.Time{}
	for stream.Next() {
		chunks++
		if chunks == 5 {
			ls.Kill()
			killedAt = time.Now()
		}
	}
	if killedAt.IsZero() {
		t.Fatalf("the stream ended after %d chunks, before the kill (err %v); the test needs a longer answer", chunks, stream.Err())
	}
	err := stream.Err()
	if err == nil {
		t.Fatalf("the stream ended cleanly after the engine was killed (%d chunks)", chunks)
	}
	if d := time.Since(killedAt); d > 30*time.Second {
		t.Errorf("the client learned of the kill after %v", d)
	}
	t.Logf("after %d chunks the kill reached the client in %v as: %v", chunks, time.Since(killedAt).Round(time.Millisecond), err)

	// The gateway still answers, and says the engine is gone.
	resp, raw := postJSON(t, base+"/v1/chat/completions", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`, ls.Model))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(raw), "upstream") {
		t.Errorf("after the kill: %d %s, want a 502 naming the upstream\n%s", resp.StatusCode, raw, logs.String())
	}
}
