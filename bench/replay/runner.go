package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/logtail"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// Replay runs every catalog, scenario and strategy of c against t and returns the report.
func Replay(ctx context.Context, c Config, t target) (*Report, error) {
	rep := &Report{Target: t.info(), Settings: settingsOf(c)}
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		return nil, err
	}
	total := len(c.Catalogs) * len(c.Scenarios) * len(c.Strategies)
	if _, ok := t.(*engineTarget); ok {
		// An engine pays one-off costs on its first requests (the constraint's vocabulary
		// index, llama.cpp's graph): a short unmeasured session takes them off the first run.
		if err := warmUp(ctx, c, t); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	k := 0
	for _, n := range c.Catalogs {
		cat, err := workload.NewCatalog(workload.CatalogOptions{Tools: n, Seed: c.Seed})
		if err != nil {
			return nil, err
		}
		ix, err := cat.Index()
		if err != nil {
			return nil, fmt.Errorf("catalog of %d tools: %w", n, err)
		}
		catTokens := counter.CatalogTokens(ix.Catalog().Render())
		for _, sc := range c.Scenarios {
			for _, st := range c.Strategies {
				k++
				start := time.Now()
				run, err := replayRun(ctx, c, t, cat, ix, sc, st, k, counter)
				if err != nil {
					return nil, fmt.Errorf("%d tools, %s, %s: %w", n, sc, st, err)
				}
				run.CatalogTokens = catTokens
				rep.Runs = append(rep.Runs, *run)
				fmt.Fprintf(c.Progress, "[%d/%d] %d tools, %s, %s (served %s): %d sessions, %s computed/session, hit %.1f%%, %d disabled calls (%.1fs)\n",
					k, total, n, sc, st, run.Served, len(run.Sessions), thousands(run.ComputedPerSession), 100*run.HitRate, run.Disabled, time.Since(start).Seconds())
			}
		}
	}
	rep.Checks = checks(rep)
	return rep, nil
}

// warmUp plays one unmeasured two-turn session under the run's first strategy (one that
// fits the engine, where the catalog under mask would not).
func warmUp(ctx context.Context, c Config, t target) error {
	cat, err := workload.NewCatalog(workload.CatalogOptions{Tools: c.Catalogs[0], Seed: c.Seed + 1})
	if err != nil {
		return err
	}
	ix, err := cat.Index()
	if err != nil {
		return err
	}
	w := c
	w.Turns, w.Progress = 2, io.Discard
	start := time.Now()
	if _, err := replayRun(ctx, w, t, cat, ix, ScenarioFresh, c.Strategies[0], 0, nil); err != nil {
		return err
	}
	fmt.Fprintf(c.Progress, "warm-up session (not measured): %.1fs\n", time.Since(start).Seconds())
	return nil
}

// plan is one run's sessions: their seeds and lengths, and how many run at once.
func plan(c Config, scenario string) (turns []int, parallel int) {
	switch scenario {
	case ScenarioFresh:
		return []int{c.Turns}, 1
	case ScenarioLong:
		return []int{c.LongTurns}, 1
	case ScenarioConcurrent:
		parallel = c.Concurrency
	default:
		parallel = 1
	}
	turns = make([]int, c.Sessions)
	for i := range turns {
		turns[i] = c.Turns
	}
	return turns, parallel
}

// replayRun starts a gateway on t's engine under strategy and plays the scenario's
// sessions through it over HTTP.
//
// Under auto the gateway chooses with kvcache's cost model (gateway.CostChooser), a new
// one for every run, told what the target can do; it learns the workload as the run
// goes.
func replayRun(ctx context.Context, c Config, t target, cat *workload.Catalog, ix *toolsearch.Index, scenario, strategy string, k int, counter *tokens.Counter) (*RunResult, error) {
	be, log := t.backend()
	reg := prometheus.NewRegistry()
	// The gateway's warnings, for the message of a failed session: a 502's cause (the
	// transport's error) is in its log, not in the envelope the client reads.
	warned := &logtail.Buffer{Max: 16 << 10}
	opt := gateway.Options{
		Logger:      slog.New(slog.NewTextHandler(warned, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Upstreams:   []gateway.Upstream{{Name: "replay", Kind: t.info().Kind, Models: []string{"*"}, Backend: be}},
		Tools:       ix,
		State:       state.NewMemory(state.Options{}),
		Strategy:    gateway.Strategy(strategy),
		Registry:    reg,
		Tokens:      counter,
		Progressive: c.Progressive,
	}
	var model *kvcache.CostModel
	if gateway.Strategy(strategy) == gateway.StrategyAuto {
		model = kvcache.NewCostModel(kvcache.Options{Engines: map[string]kvcache.Engine{"replay": t.engine()}})
		opt.Chooser = &gateway.CostChooser{Model: model}
	}
	srv := httptest.NewServer(gateway.New(opt))
	defer srv.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: c.Concurrency + 1}
	defer transport.CloseIdleConnections()
	cl := &client{base: srv.URL, http: &http.Client{Transport: transport, Timeout: 10 * time.Minute}, log: log,
		model: t.info().Model, system: workload.SystemMessage(fmt.Sprintf("Run %03d. ", k)), paste: c.Paste}

	turns, parallel := plan(c, scenario)
	run := &RunResult{Catalog: len(cat.Specs), Scenario: scenario, Strategy: strategy, Sessions: make([]SessionResult, len(turns))}
	var wg sync.WaitGroup
	errs := make(chan error, len(turns))
	sem := make(chan struct{}, parallel)
	for i, n := range turns {
		s, err := workload.NewSession(cat, workload.SessionOptions{Turns: n, Seed: c.Seed*1000 + uint64(i)})
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
			defer func() { <-sem }()
			res, err := cl.session(ctx, fmt.Sprintf("r%03d-s%02d", k, i), s)
			if err != nil {
				if !warned.Empty() {
					err = fmt.Errorf("%w\nthe gateway's last warnings:\n%s", err, warned)
				}
				errs <- fmt.Errorf("session %d: %w", i+1, err)
				return
			}
			res.Index = i + 1
			run.Sessions[i] = *res
		}()
		if parallel == 1 {
			wg.Wait() // in a row: the next session starts after this one, as ordered
		}
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	metric, err := cl.disabledCalls(ctx)
	if err != nil {
		return nil, err
	}
	run.DisabledMetric = metric
	run.summarize()
	if model != nil {
		run.Auto = autoResult(model)
	}
	return run, nil
}

// client plays sessions against the gateway as an OpenAI client would.
type client struct {
	base   string
	http   *http.Client
	log    *roundLog
	model  string
	system []byte
	paste  int // words of pasted context a user message carries
}

// session plays one session on thread and measures each turn.
func (cl *client) session(ctx context.Context, thread string, s *workload.Session) (*SessionResult, error) {
	msgs := [][]byte{cl.system}
	res := &SessionResult{}
	task := -1
	var callID string // the real tool call the client must answer, if any
	for turn := range s.Turns {
		kind := "task"
		if callID != "" {
			kind = "result"
			msgs = append(msgs, s.ToolResult(task, callID))
		} else {
			task++
			if task == len(s.Tasks) {
				task = 0 // more turns than tasks: start over (never with Turns = 2·tasks)
			}
			_, sess, _ := strings.Cut(thread, "-") // the session, not the run: every strategy pastes the same
			msgs = append(msgs, withPaste(s.UserMessage(task), sess, turn, cl.paste))
		}
		tr, msg, err := cl.turn(ctx, thread, msgs)
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", turn+1, err)
		}
		tr.Turn, tr.Kind = turn, kind
		msgs = append(msgs, msg)
		callID = ""
		var m struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(msg, &m) == nil && len(m.ToolCalls) > 0 {
			callID, tr.Call = m.ToolCalls[0].ID, m.ToolCalls[0].Function.Name
		}
		res.Turns = append(res.Turns, *tr)
	}
	return res, nil
}

// pasteWords are the words pasted context is made of: a log's vocabulary.
var pasteWords = strings.Fields("error warn info request latency timeout retry upstream pod node queue shard " +
	"replica lease token cache miss hit disk quota backoff deploy rollout canary alert page ticket " +
	"checkout payment invoice customer region zone migration index vacuum lock deadlock")

// withPaste appends words of pasted context to a user message: a log excerpt of n
// words, drawn deterministically from the session and turn, so every message's is its
// own and every strategy's run pastes the same.
func withPaste(msg []byte, session string, turn, n int) []byte {
	if n == 0 {
		return msg
	}
	var m struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", session, turn)
	x := h.Sum64() | 1
	var b strings.Builder
	b.WriteString(m.Content)
	b.WriteString("\n\nPasted log:\n")
	for i := range n {
		x ^= x << 13 // xorshift64
		x ^= x >> 7
		x ^= x << 17
		if i > 0 {
			b.WriteByte(' ')
		}
		if i%12 == 0 {
			fmt.Fprintf(&b, "%02d:%02d:%02d", x%24, x>>8%60, x>>16%60)
			continue
		}
		b.WriteString(pasteWords[x%uint64(len(pasteWords))])
	}
	m.Content = b.String()
	out, _ := json.Marshal(m)
	return out
}

// turn sends the conversation so far and reads the gateway's accounting.
func (cl *client) turn(ctx context.Context, thread string, msgs [][]byte) (*TurnResult, json.RawMessage, error) {
	body := []byte(`{"model":` + strconv.Quote(cl.model) + `,"messages":[` + string(bytes.Join(msgs, []byte(","))) + `],"max_tokens":64,"seed":1}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Thread-Id", thread)
	start := time.Now()
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	wall := time.Since(start)
	if err != nil {
		return nil, nil, err
	}
	rounds := cl.log.take(resp.Header.Get(gateway.HeaderThread))
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("gateway answered %d: %s", resp.StatusCode, bytes.TrimSpace(out))
	}
	var parsed struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out, &parsed); err != nil || len(parsed.Choices) == 0 {
		return nil, nil, fmt.Errorf("gateway answer without a message: %s", out)
	}
	tr := &TurnResult{Rounds: len(rounds), Strategy: resp.Header.Get(gateway.HeaderStrategy), Cache: resp.Header.Get(gateway.HeaderCache),
		Completion: parsed.Usage.CompletionTokens, Wall: wall.Seconds()}
	for _, h := range []struct {
		name string
		dst  *int
	}{{gateway.HeaderPromptTokens, &tr.Prompt}, {gateway.HeaderCachedTokens, &tr.Cached}, {gateway.HeaderComputedTokens, &tr.Computed}} {
		v, err := strconv.Atoi(resp.Header.Get(h.name))
		if err != nil {
			return nil, nil, fmt.Errorf("gateway answer without %s: %v", h.name, err)
		}
		*h.dst = v
	}
	// Time to the first token of the answer the client gets: every earlier round whole,
	// then the last round's prefill.
	var decode float64
	for i, r := range rounds {
		if i < len(rounds)-1 {
			tr.TTFT += r.TTFT + r.Decode
		} else {
			tr.TTFT += r.TTFT
		}
		tr.EngineSeconds += r.TTFT + r.Decode
		decode += r.Decode
		tr.RoundCompletion += r.Completion
		tr.RoundPrompt += r.Prompt
		tr.LastPrompt = r.Prompt
		if r.Stray {
			tr.Disabled++
		}
	}
	if tr.RoundCompletion > 0 {
		tr.TPOT = decode / float64(tr.RoundCompletion)
	}
	for _, f := range []*float64{&tr.TTFT, &tr.TPOT, &tr.EngineSeconds, &tr.Wall} {
		*f = math.Round(*f*1e7) / 1e7 // 0.1 µs: enough, and the JSON stays short
	}
	return tr, parsed.Choices[0].Message, nil
}

// disabledCalls reads maskgate_disabled_tool_calls_total, every label summed, from the
// gateway's /metrics.
func (cl *client) disabledCalls(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return sumMetric(resp.Body, "maskgate_disabled_tool_calls_total")
}

// sumMetric sums the samples of a counter in Prometheus text format.
func sumMetric(r io.Reader, name string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	total := 0.0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue // another metric sharing the prefix
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("/metrics: %s: %w", line, err)
		}
		total += v
	}
	return int(total), sc.Err()
}

// autoResult reads the run's cost model at its end.
func autoResult(m *kvcache.CostModel) *AutoResult {
	a := &AutoResult{Prefill: m.Prefill("replay"), Decode: m.Decode("replay"), Decision: m.Decide("default", "replay")}
	a.PrefillMeasured, a.DecodeMeasured = m.Fitted("replay")
	return a
}
