package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
)

// The quick replay's figures are checked for sanity and the ordering the design
// predicts, never for timings.
func TestQuick_SaneAccountingAndEveryFileWritten(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-quick", "-out", dir}, &stdout, &stderr, func(string) string { return "" }); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "[28/28]") {
		t.Errorf("no progress for every run on stderr:\n%s", stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(rep.Runs) != 28 {
		t.Fatalf("%d runs, want 4 scenarios × 7 strategies", len(rep.Runs))
	}
	checkSane(t, &rep)

	runs := map[string]RunResult{}
	for _, r := range rep.Runs {
		runs[r.Scenario+"/"+r.Strategy] = r
		if r.Strategy != string(gateway.StrategyAuto) && r.Served != r.Strategy {
			t.Errorf("%s/%s: served %q", r.Scenario, r.Strategy, r.Served)
		}
		if r.Strategy == string(gateway.StrategyAuto) {
			for _, st := range strings.Split(r.Served, "+") {
				if st == string(gateway.StrategyAuto) || !slices.Contains(allStrategies, st) {
					t.Errorf("%s/auto: served %q", r.Scenario, r.Served)
				}
			}
		}
	}
	mask, remove := runs["profile/mask"], runs["profile/remove"]
	if !(mask.ComputedLater < remove.ComputedLater) {
		t.Errorf("from the second session on, mask computed %.0f tokens a session, remove %.0f: mask must compute fewer", mask.ComputedLater, remove.ComputedLater)
	}
	if !(mask.ComputedLater < float64(mask.ComputedFirst)) {
		t.Errorf("mask's later sessions computed %.0f, its first %d: the catalog prefix was not shared", mask.ComputedLater, mask.ComputedFirst)
	}
	if len(rep.Checks) == 0 {
		t.Error("no target was reported")
	}

	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, stdout.Bytes()) {
		t.Error("stdout is not results.md")
	}
	for _, want := range []string{"## Computed prompt tokens per session", "| 20 tools | profile, sessions 2–3 (mean) |", "## Targets", "no engine ran"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("results.md lacks %q", want)
		}
	}
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	if len(svgs) != 5 {
		t.Errorf("%d SVG files, want a computed plot and 4 hit-rate plots", len(svgs))
	}
	for _, f := range svgs {
		b, _ := os.ReadFile(f)
		if err := wellFormed(b); err != nil || !bytes.Contains(b, []byte("<polyline")) && !bytes.Contains(b, []byte("<rect x=")) {
			t.Errorf("%s: not a plot (%v)", filepath.Base(f), err)
		}
		if !bytes.Contains(md, []byte("("+filepath.Base(f)+")")) {
			t.Errorf("results.md does not show %s", filepath.Base(f))
		}
	}
}

// checkSane holds every turn to the accounting identities.
func checkSane(t *testing.T, rep *Report) {
	t.Helper()
	for _, r := range rep.Runs {
		if r.HitRate < 0 || r.HitRate > 1 || r.HitRateAfterFirst < 0 || r.HitRateAfterFirst > 1 {
			t.Errorf("%d/%s/%s: hit rates %g, %g", r.Catalog, r.Scenario, r.Strategy, r.HitRate, r.HitRateAfterFirst)
		}
		if r.Disabled != r.DisabledMetric {
			t.Errorf("%d/%s/%s: %d calls to unloaded tools left the engine, the gateway counted %d", r.Catalog, r.Scenario, r.Strategy, r.Disabled, r.DisabledMetric)
		}
		for _, s := range r.Sessions {
			if len(s.Turns) == 0 {
				t.Errorf("%s/%s session %d has no turns", r.Scenario, r.Strategy, s.Index)
			}
			for _, tr := range s.Turns {
				where := func() string {
					return fmt.Sprintf("%s/%s session %d turn %d", r.Scenario, r.Strategy, s.Index, tr.Turn)
				}
				if tr.Cached < 0 || tr.Cached > tr.Prompt || tr.Computed != tr.Prompt-tr.Cached {
					t.Errorf("%s: prompt %d cached %d computed %d", where(), tr.Prompt, tr.Cached, tr.Computed)
				}
				if h := tr.HitRate(); h < 0 || h > 1 {
					t.Errorf("%s: hit rate %g", where(), h)
				}
				if tr.Rounds < 1 || tr.RoundPrompt != tr.Prompt || tr.RoundCompletion != tr.Completion {
					t.Errorf("%s: %d rounds; the gateway's prompt %d and completion %d are not the rounds' %d and %d",
						where(), tr.Rounds, tr.Prompt, tr.Completion, tr.RoundPrompt, tr.RoundCompletion)
				}
				if tr.Kind == "task" && tr.Call == "" {
					t.Errorf("%s: a task got no tool call", where())
				}
			}
		}
	}
}

func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// With a model that always strays, only validate lets the strays reach the gateway;
// a constraint (mask, allowed_tools) turns them into loads, and remove never shows the
// tool before it is loaded.
func TestReplay_StraysReachTheGatewayOnlyUnderValidate(t *testing.T) {
	c := quickConfig(Config{Stray: 1, Scenarios: []string{ScenarioFresh}}).withDefaults()
	tg, err := newTarget(c)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(context.Background(), c, tg)
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, rep)
	computed := map[string]int{}
	for _, r := range rep.Runs {
		computed[r.Strategy] = r.Sessions[0].Computed
		wantSome := r.Strategy == string(gateway.StrategyValidate)
		if (r.DisabledMetric > 0) != wantSome {
			t.Errorf("%s: %d disabled calls", r.Strategy, r.DisabledMetric)
		}
	}
	if computed[string(gateway.StrategyValidate)] <= computed[string(gateway.StrategyMask)] {
		t.Errorf("validate computed %d, mask %d: the retries cost nothing?", computed[string(gateway.StrategyValidate)], computed[string(gateway.StrategyMask)])
	}
}

func TestRenderer_APromptAndItsAnswerStartTheNextPrompt(t *testing.T) {
	r, err := newRenderer()
	if err != nil {
		t.Fatal(err)
	}
	sys := `{"role":"system","content":"be brief"}`
	user := `{"role":"user","content":"hi"}`
	answer := `{"role":"assistant","content":"hello"}`
	tools := `[{"type":"function","function":{"name":"a"}}]`
	p1, err := r.prompt([]byte(`{"messages":[` + sys + `,` + user + `],"tools":` + tools + `}`))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := r.prompt([]byte(`{"messages":[` + sys + `,` + user + `,` + answer + `,` + user + `],"tools":` + tools + `}`))
	grown := append(append([]int32(nil), p1...), r.completion([]byte(answer))...)
	if len(p2) <= len(grown) || !equal(p2[:len(grown)], grown) {
		t.Errorf("the next prompt does not start with prompt + answer:\n%v\n%v", grown, p2)
	}
	other, _ := r.prompt([]byte(`{"messages":[` + sys + `,` + user + `],"tools":[{"type":"function","function":{"name":"b"}}]}`))
	if equal(other, p1) {
		t.Error("different tools rendered the same tokens")
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSumMetric_AddsEveryLabelOfOneCounterOnly(t *testing.T) {
	text := `# HELP maskgate_disabled_tool_calls_total Calls.
# TYPE maskgate_disabled_tool_calls_total counter
maskgate_disabled_tool_calls_total{backend="replay",outcome="retried",strategy="validate"} 3
maskgate_disabled_tool_calls_total{backend="replay",outcome="refused",strategy="validate"} 1
maskgate_disabled_tool_calls_total_extra 100
maskgate_requests_total{backend="replay",door="chat_completions",model="x",status="200"} 7
`
	n, err := sumMetric(strings.NewReader(text), "maskgate_disabled_tool_calls_total")
	if err != nil || n != 4 {
		t.Errorf("sum = %d, %v; want 4", n, err)
	}
}

func TestRun_BadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"-target", "gpu"},
		{"-catalogs", "ten"},
		{"-catalogs", "0"},
		{"-scenarios", "weekly"},
		{"-strategies", "grammar"},
		{"-stray", "2"},
		{"-target", "url"},
		{"-target", "url", "-url", "ftp://x", "-kind", "vllm", "-model", "m"},
		{"-target", "url", "-url", "http://127.0.0.1:1/v1", "-kind", "tgi", "-model", "m"},
		{"-api-key-env", "REPLAY_TEST_UNSET"},
		{"extra"},
	} {
		if got := run(context.Background(), args, io.Discard, io.Discard, func(string) string { return "" }); got != 2 {
			t.Errorf("run(%q) = %d, want 2", args, got)
		}
	}
}
