package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch/profile"
	"github.com/maskgate/maskgate/toolsearch/state"
)

const stopReply = `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":3,"total_tokens":123,"prompt_tokens_details":{"cached_tokens":100}}}`

// strategyGateway serves the 25-tool catalog under strategy with a scripted upstream,
// wrapped by wrap when not nil.
func strategyGateway(t *testing.T, sc *scripted, strategy gateway.Strategy, wrap func(backends.Backend) backends.Backend) (*httptest.Server, *prometheus.Registry) {
	t.Helper()
	up := httptest.NewServer(sc.handler(t))
	t.Cleanup(up.Close)
	var be backends.Backend
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		be = wrap(be)
	}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t),
		State:     state.NewMemory(state.Options{}),
		Strategy:  strategy,
		Registry:  reg,
	}))
	t.Cleanup(srv.Close)
	return srv, reg
}

func TestStrategy_EagerSendsTheWholeCatalogAndNoMetaTools(t *testing.T) {
	sc := &scripted{replies: []string{stopReply}}
	gw, _ := strategyGateway(t, sc, gateway.StrategyEager, nil)
	resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "e")
	if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "eager" {
		t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
	}
	names := toolNames(t, sc.bodies[0]["tools"])
	if len(names) != 25 {
		t.Fatalf("%d tools, want the 25 of the catalog", len(names))
	}
	for _, n := range names {
		if n == "search_tools" || n == "load_tool" {
			t.Errorf("eager sent meta-tool %s", n)
		}
	}
}

func TestStrategy_ValidateKeepsTheCatalogAndAnswersStrayCalls(t *testing.T) {
	for _, configured := range []gateway.Strategy{gateway.StrategyValidate, gateway.StrategyMask} {
		t.Run(string(configured), func(t *testing.T) {
			sc := &scripted{replies: []string{callReply("c1", "github_create_issue", `{"x":"bug"}`), stopReply}}
			gw, reg := strategyGateway(t, sc, configured, nil)
			resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"file a bug"}]}`, "v")
			// mask on a backend that cannot constrain is validate: the same prompt,
			// stray calls answered afterwards.
			if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "validate" {
				t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
			}
			if strings.Contains(string(body), "github_create_issue") {
				t.Fatalf("the client saw the stray call: %s", body)
			}
			if len(sc.bodies) != 2 || string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) {
				t.Fatalf("%d rounds; the tools bytes must not change between them", len(sc.bodies))
			}
			if n := len(toolNames(t, sc.bodies[0]["tools"])); n != 27 {
				t.Errorf("%d tools, want 25 plus 2 meta-tools", n)
			}
			if _, ok := sc.bodies[0]["tool_choice"]; ok {
				t.Errorf("validate constrains nothing, yet sent tool_choice %s", sc.bodies[0]["tool_choice"])
			}
			got := counter(t, reg, "maskgate_disabled_tool_calls_total", map[string]string{"backend": "up", "strategy": "validate", "outcome": "retried"})
			if got != 1 {
				t.Errorf("disabled_tool_calls_total{retried} = %v, want 1", got)
			}
		})
	}
}

func TestStrategy_AllowedToolsNarrowsTheClientsToolChoice(t *testing.T) {
	cases := []struct {
		name, choice string
		want         []string // tool_choice per round; "" = absent
	}{
		{"auto", ``, []string{
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}}]}}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}},{"type":"function","function":{"name":"slack_send_message"}}]}}`,
		}},
		{"required", `,"tool_choice":"required"`, []string{
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}}]}}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}},{"type":"function","function":{"name":"slack_send_message"}}]}}`,
		}},
		{"none", `,"tool_choice":"none"`, []string{`"none"`, `"none"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`), stopReply}}
			gw, _ := strategyGateway(t, sc, gateway.StrategyAllowedTools, nil)
			resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]`+c.choice+`}`, "a-"+c.name)
			if resp.StatusCode != 200 || resp.Header.Get(gateway.HeaderStrategy) != "allowed_tools" {
				t.Fatalf("status %d strategy %q: %s", resp.StatusCode, resp.Header.Get(gateway.HeaderStrategy), body)
			}
			if len(sc.bodies) != 2 {
				t.Fatalf("%d rounds, want 2", len(sc.bodies))
			}
			for i, want := range c.want {
				if got := string(sc.bodies[i]["tool_choice"]); got != want {
					t.Errorf("round %d tool_choice\n got %s\nwant %s", i, got, want)
				}
			}
			if string(sc.bodies[0]["tools"]) != string(sc.bodies[1]["tools"]) {
				t.Error("the tools bytes changed when the loaded set did")
			}
		})
	}
}

func TestStrategy_AutoWithoutChooserFollowsTheBackend(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply}}
	plain, _ := strategyGateway(t, sc, gateway.StrategyAuto, nil)
	resp, _ := postWithThread(t, plain, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "p")
	if got := resp.Header.Get(gateway.HeaderStrategy); got != "remove" {
		t.Errorf("auto on a plain backend = %q, want remove", got)
	}
	masked, _ := strategyGateway(t, sc, gateway.StrategyAuto, func(b backends.Backend) backends.Backend { return &constraining{Backend: b} })
	resp, _ = postWithThread(t, masked, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "q")
	if got := resp.Header.Get(gateway.HeaderStrategy); got != "mask" {
		t.Errorf("auto on a constraining backend = %q, want mask", got)
	}
}

type fixedChooser struct {
	got []gateway.ChoiceInput
	say gateway.Strategy
}

func (f *fixedChooser) Choose(in gateway.ChoiceInput) gateway.Strategy {
	f.got = append(f.got, in)
	return f.say
}

func TestStrategy_AutoAsksTheChooser(t *testing.T) {
	sc := &scripted{replies: []string{stopReply}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	ch := &fixedChooser{say: gateway.StrategyEager}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ch,
	}))
	defer srv.Close()
	resp, _ := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "c")
	if got := resp.Header.Get(gateway.HeaderStrategy); got != "eager" {
		t.Errorf("strategy %q, want the chooser's eager", got)
	}
	if len(ch.got) != 1 || ch.got[0].Backend != "up" || ch.got[0].CatalogTools != 25 || ch.got[0].Catalog.Tools != 25 || ch.got[0].Catalog.Tokens == 0 || ch.got[0].Capabilities.Constrains {
		t.Errorf("chooser asked with %+v", ch.got)
	}
}

func TestAccounting_HeadersOnWholeAnswersTrailersOnStreams(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply}}
	gw, reg := strategyGateway(t, sc, gateway.StrategyRemove, nil)
	resp, _ := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "h")
	for h, want := range map[string]string{gateway.HeaderPromptTokens: "120", gateway.HeaderCachedTokens: "100", gateway.HeaderComputedTokens: "20"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %s", h, got, want)
		}
	}
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Thread-Id", "h2")
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, sresp.Body)
	sresp.Body.Close()
	if got := sresp.Trailer.Get(gateway.HeaderComputedTokens); got != "20" {
		t.Errorf("stream trailer %s = %q, want 20 (trailers %v)", gateway.HeaderComputedTokens, got, sresp.Trailer)
	}
	got := counter(t, reg, "maskgate_computed_prompt_tokens_total", map[string]string{"backend": "up", "strategy": "remove"})
	if got != 40 {
		t.Errorf("computed_prompt_tokens_total = %v, want 40 over two requests", got)
	}
}

// counter sums the samples of a counter whose labels include want.
func counter(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func TestAuto_CostChooserLearnsFromRequests(t *testing.T) {
	sc := &scripted{replies: []string{callReply("c1", "load_tool", `{"toolName":"slack_send_message"}`), stopReply}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	reg := prometheus.NewRegistry()
	cm := kvcache.NewCostModel(kvcache.Options{Engines: map[string]kvcache.Engine{"up": {Capabilities: kvcache.Capabilities{CachesPrefixes: true}}}})
	if err := cm.Register(reg); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}),
		Chooser: &gateway.CostChooser{Model: cm},
	}))
	defer srv.Close()
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"tell slack"}]}`, "auto")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// The backend cannot constrain, so the model chooses among the rest; whatever it
	// chose is what the response says.
	d := cm.Decide("default", "up")
	if got := resp.Header.Get(gateway.HeaderStrategy); got != string(d.Strategy) || got == "mask" {
		t.Errorf("response strategy %q, the model's decision %q", got, d.Strategy)
	}
	if len(d.Estimates) == 0 {
		t.Fatalf("the model saw no catalog: %+v", d)
	}
	if d.Workload.LoadsPerSession == 0 {
		t.Errorf("the load was not observed: %+v", d.Workload)
	}
}

type flipChooser struct{ n int }

func (f *flipChooser) Choose(gateway.ChoiceInput) gateway.Strategy {
	f.n++
	if f.n%2 == 1 {
		return gateway.StrategyRemove
	}
	return gateway.StrategyValidate
}

func TestStrategy_AutoPinsAThreadToItsFirstChoice(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply, stopReply}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	ch := &flipChooser{}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ch,
	}))
	defer srv.Close()
	var got []string
	for _, thread := range []string{"one", "one", "two"} {
		resp, _ := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, thread)
		got = append(got, resp.Header.Get(gateway.HeaderStrategy))
	}
	if want := []string{"remove", "remove", "validate"}; !slices.Equal(got, want) {
		t.Errorf("strategies %v, want %v: a thread keeps its first, a new thread asks again", got, want)
	}
	if ch.n != 2 {
		t.Errorf("the chooser was asked %d times, want 2 (once per thread)", ch.n)
	}
}

// labelling is a backend that always says it used strategy say.
type labelling struct {
	backends.Backend
	say        string
	constrains bool
}

func (l *labelling) ConstrainsTools() bool { return l.constrains }

func (l *labelling) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	resp, err := l.Backend.ChatCompletion(ctx, req)
	if err == nil {
		resp.Strategy = l.say
	}
	return resp, err
}

func TestStrategy_BackendsLabelCountsOnlyUnderMaskOrUnmanaged(t *testing.T) {
	cases := []struct {
		strategy   gateway.Strategy
		say        string
		constrains bool
		want       string
	}{
		{gateway.StrategyRemove, "mask", true, "remove"}, // the engine masked within remove: still remove
		{gateway.StrategyAllowedTools, "mask", true, "allowed_tools"},
		{gateway.StrategyMask, "validate", true, "validate"}, // it could not constrain this time
		{gateway.StrategyMask, "", true, "mask"},
	}
	for _, c := range cases {
		t.Run(string(c.strategy)+"_"+c.say, func(t *testing.T) {
			sc := &scripted{replies: []string{stopReply}}
			gw, _ := strategyGateway(t, sc, c.strategy, func(b backends.Backend) backends.Backend {
				return &labelling{Backend: b, say: c.say, constrains: c.constrains}
			})
			resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "l")
			if got := resp.Header.Get(gateway.HeaderStrategy); got != c.want {
				t.Errorf("strategy %q, want %q: %s", got, c.want, body)
			}
		})
	}
}

type recordingObserver struct {
	fixedChooser
	seen []gateway.Observation
}

func (r *recordingObserver) Observe(o gateway.Observation) { r.seen = append(r.seen, o) }

func TestAuto_StreamsReportMeasuredPrefill(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	ob := &recordingObserver{fixedChooser: fixedChooser{say: gateway.StrategyRemove}}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ob,
	}))
	defer srv.Close()
	postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "p1")
	resp, _ := postWithThread(t, srv, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "p2")
	if resp.StatusCode != 200 || len(ob.seen) != 2 {
		t.Fatalf("status %d, %d observations", resp.StatusCode, len(ob.seen))
	}
	if len(ob.seen[0].Prefills) != 0 {
		t.Errorf("a whole answer's time is not prefill, yet it was reported: %+v", ob.seen[0].Prefills)
	}
	if p := ob.seen[1].Prefills; len(p) != 1 || p[0].Cached != 100 || p[0].Computed != 20 || p[0].Seconds <= 0 {
		t.Errorf("stream prefill samples %+v, want one: 100 cached, 20 computed, a positive time", p)
	}
	if !ob.seen[0].NewSession || ob.seen[0].Catalog.Tools != 25 {
		t.Errorf("observation %+v", ob.seen[0])
	}
}

func TestStrategy_ANamespaceInToolChoiceIsTheSpecifiedMode(t *testing.T) {
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf(`{"type":"function","function":{"name":"misc_tool_%02d"}}`, i))
	}
	cases := []struct {
		name, choice, want string
		status             int
	}{
		{"function prefix", `{"type":"function","function":{"name":"misc_tool_0*"}}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[` + strings.Join(want, ",") + `]}}`, 200},
		{"allowed_tools mixes names and a prefix", `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"slack_send_message"}},{"type":"function","function":{"name":"calendar_*"}}]}}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"slack_send_message"}},{"type":"function","function":{"name":"calendar_create_event"}}]}}`, 200},
		{"a plain choice is left alone", `"required"`, `"required"`, 200},
		{"no tool has the prefix", `{"type":"function","function":{"name":"browser_*"}}`, "", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := &scripted{replies: []string{stopReply}}
			gw, _ := strategyGateway(t, sc, gateway.StrategyRemove, nil)
			resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}],"tool_choice":`+c.choice+`}`, "ns")
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status != 200 {
				if !strings.Contains(string(body), `"param":"tool_choice"`) {
					t.Errorf("error without param tool_choice: %s", body)
				}
				return
			}
			if got := string(sc.bodies[0]["tool_choice"]); got != c.want {
				t.Errorf("upstream tool_choice\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// A streamed answer of one round reports its decode: from the first chunk to the last,
// the completion tokens after the first, after the prompt.
func TestAuto_StreamsReportMeasuredDecode(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range 5 {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"},\"finish_reason\":null}]}\n\n", i)
			fl.Flush()
			time.Sleep(30 * time.Millisecond)
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":5,\"total_tokens\":125}}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	ob := &recordingObserver{fixedChooser: fixedChooser{say: gateway.StrategyRemove}}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ob,
	}))
	defer srv.Close()
	resp, _ := postWithThread(t, srv, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "d1")
	if resp.StatusCode != 200 || len(ob.seen) != 1 {
		t.Fatalf("status %d, %d observations", resp.StatusCode, len(ob.seen))
	}
	if d := ob.seen[0].Decodes; len(d) != 1 || d[0].Tokens != 4 || d[0].Context != 121 || d[0].Seconds < 0.1 || d[0].Seconds > 5 {
		t.Errorf("decode samples %+v, want one: 4 tokens after 121 in at least the 4 gaps of 30 ms", d)
	}
}

// timedBackend answers each round with the scripted upstream's answer and an engine's
// own timings, as llama-server reports them.
type timedBackend struct {
	backends.Backend
	times []backends.Timings
	n     int
}

func (b *timedBackend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	resp, err := b.Backend.ChatCompletion(ctx, req)
	if err == nil && b.n < len(b.times) {
		resp.Timings = &b.times[b.n]
		b.n++
	}
	return resp, err
}

// Where the engine reports its own timings, every round of a request is a sample, whole
// answers included: the engine's clock, not the gateway's.
func TestAuto_EngineTimingsOfEveryRoundAreObserved(t *testing.T) {
	sc := &scripted{replies: []string{callReply("c1", "search_tools", `{"query":"slack"}`), stopReply}}
	up := httptest.NewServer(sc.handler(t))
	defer up.Close()
	inner, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	be := &timedBackend{Backend: inner, times: []backends.Timings{
		{Cached: 0, Computed: 900, PrefillSeconds: 0.25, DecodeSteps: 11, DecodeSeconds: 0.066},
		{Cached: 900, Computed: 40, PrefillSeconds: 0.012, DecodeSteps: 0, DecodeSeconds: 0},
	}}
	ob := &recordingObserver{fixedChooser: fixedChooser{say: gateway.StrategyRemove}}
	srv := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ob,
	}))
	defer srv.Close()
	resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"post to slack"}]}`, "e1")
	if resp.StatusCode != 200 || len(ob.seen) != 1 {
		t.Fatalf("status %d, %d observations: %s", resp.StatusCode, len(ob.seen), body)
	}
	wantP := []kvcache.PrefillSample{{Cached: 0, Computed: 900, Seconds: 0.25}, {Cached: 900, Computed: 40, Seconds: 0.012}}
	if got := ob.seen[0].Prefills; !slices.Equal(got, wantP) {
		t.Errorf("prefill samples %+v, want %+v", got, wantP)
	}
	// The round without decode steps is no decode sample; the other's context is its
	// prompt and the first output token.
	wantD := []kvcache.DecodeSample{{Context: 901, Tokens: 11, Seconds: 0.066}}
	if got := ob.seen[0].Decodes; !slices.Equal(got, wantD) {
		t.Errorf("decode samples %+v, want %+v", got, wantD)
	}
}

// A request the backend decoded under its constraint (it reports mask) is observed as
// constrained, and feeds the cost mask pays; the same backend reporting validate (the
// constraint could not go out) is plain.
func TestAuto_DecodesUnderTheConstraintAreObservedApart(t *testing.T) {
	for _, tc := range []struct {
		say             string
		wantConstrained bool
	}{{"mask", true}, {"validate", false}} {
		t.Run(tc.say, func(t *testing.T) {
			sc := &scripted{replies: []string{stopReply}}
			up := httptest.NewServer(sc.handler(t))
			defer up.Close()
			inner, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
			timed := &timedBackend{Backend: inner, times: []backends.Timings{
				{Cached: 0, Computed: 900, PrefillSeconds: 0.25, DecodeSteps: 11, DecodeSeconds: 0.066}}}
			be := &labelling{Backend: timed, say: tc.say, constrains: true}
			ob := &recordingObserver{fixedChooser: fixedChooser{say: gateway.StrategyMask}}
			srv := httptest.NewServer(gateway.New(gateway.Options{
				Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
				Tools:     bigCatalog(t), State: state.NewMemory(state.Options{}), Chooser: ob,
			}))
			defer srv.Close()
			resp, body := postWithThread(t, srv, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "c1")
			if resp.StatusCode != 200 || len(ob.seen) != 1 {
				t.Fatalf("status %d, %d observations: %s", resp.StatusCode, len(ob.seen), body)
			}
			o := ob.seen[0]
			if o.Constrained != tc.wantConstrained || len(o.Decodes) != 1 {
				t.Errorf("backend said %s: constrained %v with %d decode samples, want %v and 1", tc.say, o.Constrained, len(o.Decodes), tc.wantConstrained)
			}
			// Fed to a cost model beside plain observations of the same shape, the
			// request's samples make a constrained cost only when they were constrained
			// (contexts varied so that a fit is determined).
			cm := kvcache.NewCostModel(kvcache.Options{})
			ch := &gateway.CostChooser{Model: cm}
			for i := range 8 {
				for _, v := range []gateway.Observation{o, {Profile: o.Profile, Backend: o.Backend, Catalog: o.Catalog}} {
					v.Decodes = []kvcache.DecodeSample{{Context: 1000 * (i + 1), Tokens: 10 + 5*i, Seconds: 0.01 * float64(10+5*i) * (1 + float64(i)/10)}}
					ch.Observe(v)
				}
			}
			_, fitted := cm.ConstrainedDecode("up")
			if _, plainFitted := cm.Fitted("up"); fitted != tc.wantConstrained || !plainFitted {
				t.Errorf("backend said %s: constrained decode fitted %v, plain fitted %v", tc.say, fitted, plainFitted)
			}
		})
	}
}

// Auto decides for each profile apart: a profile's catalog and sessions are its own, so
// a request under one profile never feeds or reads another's state in the cost model.
func TestAuto_EachProfileIsDecidedApart(t *testing.T) {
	sc := &scripted{replies: []string{stopReply, stopReply, stopReply}}
	cm := kvcache.NewCostModel(kvcache.Options{Engines: map[string]kvcache.Engine{"up": {Capabilities: kvcache.Capabilities{CachesPrefixes: true}}}})
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.State = state.NewMemory(state.Options{})
		o.Strategy = gateway.StrategyAuto
		o.Chooser = &gateway.CostChooser{Model: cm}
		o.Profiles = []*gateway.Profile{
			{Name: "small", Catalog: profileCatalog(t, "small", 21, profile.Spec{}), Strategy: gateway.StrategyAuto},
			{Name: "large", Catalog: profileCatalog(t, "large", 120, profile.Spec{}), Strategy: gateway.StrategyAuto},
		}
		o.Keys = keyring(t, tenant.Key{Name: "alice", Profile: "small"}, tenant.Key{Name: "bob", Profile: "large"})
	})
	for _, key := range []string{"alice", "bob", "alice"} {
		resp, body := sendAs(t, gw, "/v1/chat/completions", key, nil, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", key, resp.StatusCode, body)
		}
	}
	small, okS := cm.Last("small", "up")
	large, okL := cm.Last("large", "up")
	if !okS || !okL {
		t.Fatalf("decisions: small %v, large %v; want one for each profile", okS, okL)
	}
	if _, ok := cm.Last(gateway.DefaultProfile, "up"); ok {
		t.Error("the default profile, which served nothing, has a decision")
	}
	remove := func(d kvcache.Decision) float64 { s, _ := d.Seconds(kvcache.StrategyRemove); return s }
	if !(remove(small) < remove(large)) {
		t.Errorf("remove costs %.4gs a session on 21 tools and %.4gs on 120: the profiles' catalogs were mixed", remove(small), remove(large))
	}
	if got, ok := (&gateway.CostChooser{Model: cm}).Explain("large", "up"); !ok || got.Strategy != large.Strategy {
		t.Errorf("Explain(large) = %+v, %v", got.Strategy, ok)
	}
}
