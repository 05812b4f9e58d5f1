package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
)

// indexRow is one row of docs/benchmarks.md's table "Strategy index on the prefix
// model": index's and mask's computed tokens per session (the fresh or long session, or
// the mean of a profile's sessions 2–10), index's cached share after each session's first
// turn, both strategies' prompt at the last turn (mean over sessions), and what auto
// served.
type indexRow struct {
	n                   int
	sc                  string
	index, mask         int
	cached              string // index's, in percent to one decimal
	indexLast, maskLast int
	auto                gateway.Strategy
}

// indexRows are the figures TestReplay_TheREADMEFigures holds for strategy index.
var indexRows = []indexRow{
	{20, ScenarioFresh, 2688, 4434, "96.7", 3330, 5100, gateway.StrategyIndex},
	{20, ScenarioProfile, 1883, 1167, "96.8", 3440, 5145, gateway.StrategyIndex},
	{20, ScenarioLong, 5468, 7228, "98.8", 7682, 9452, gateway.StrategyIndex},
	{100, ScenarioFresh, 4515, 16036, "98.3", 5169, 16692, gateway.StrategyRemove},
	{100, ScenarioProfile, 1926, 1166, "98.2", 5305, 16743, gateway.StrategyRemove},
	{100, ScenarioLong, 7260, 18917, "99.2", 9498, 21021, gateway.StrategyRemove},
	{500, ScenarioFresh, 13510, 73566, "99.5", 14206, 74192, gateway.StrategyRemove},
	{500, ScenarioProfile, 1902, 1163, "99.4", 14228, 74231, gateway.StrategyRemove},
	{500, ScenarioLong, 16322, 76370, "99.6", 18581, 78567, gateway.StrategyRemove},
}

// checkIndexTable holds strategy index's figures in the default prefix-model replay
// exactly, as docs/benchmarks.md quotes them (the replay is deterministic), the page's
// table to those rows, and issue 40's targets where they are met: at 500 tools index's
// prompt at the last turn is at most 0.2× mask's in the fresh and profile sessions, and
// at least 99 % of its prompt tokens are cached after each session's first turn in every
// scenario. The targets the replay misses are held as measured, and the page says so:
// the 80-turn session's prompt (0.24× mask's: the conversation grows alike under both),
// the cached share at 20 and 100 tools (each load's definitions are new tokens in a
// smaller prompt), and computed tokens from a profile's second session on (1.6× mask's,
// not 1.2×: each load prefills the tool's definition, which mask had cached in its
// catalog).
func checkIndexTable(t *testing.T, get func(n int, sc, st string) *RunResult) {
	t.Helper()
	computed := func(r *RunResult) int {
		if r.Scenario == ScenarioProfile {
			return int(math.Round(r.ComputedLater))
		}
		return r.ComputedFirst
	}
	for _, w := range indexRows {
		index, mask := get(w.n, w.sc, string(gateway.StrategyIndex)), get(w.n, w.sc, string(gateway.StrategyMask))
		auto := get(w.n, w.sc, string(gateway.StrategyAuto))
		if index.Served != string(gateway.StrategyIndex) {
			t.Errorf("%d tools, %s: strategy index served %q", w.n, w.sc, index.Served)
		}
		got := indexRow{w.n, w.sc, computed(index), computed(mask), fmt.Sprintf("%.1f", 100*index.HitRateAfterFirst),
			int(math.Round(index.LastPrompt)), int(math.Round(mask.LastPrompt)), gateway.Strategy(auto.Served)}
		if got != w {
			t.Errorf("%d tools, %s: measured %+v; docs/benchmarks.md quotes %+v", w.n, w.sc, got, w)
		}
		if index.DisabledMetric != 0 {
			t.Errorf("%d tools, %s: %d disabled calls under index", w.n, w.sc, index.DisabledMetric)
		}
		if w.n != 500 {
			continue
		}
		if index.HitRateAfterFirst < 0.99 {
			t.Errorf("500 tools, %s: index cached %.2f%% after the first turn; target ≥ 99%%", w.sc, 100*index.HitRateAfterFirst)
		}
		if q := index.LastPrompt / mask.LastPrompt; w.sc != ScenarioLong && q > 0.2 {
			t.Errorf("500 tools, %s: index's prompt at the last turn is %.3f× mask's; target ≤ 0.2×", w.sc, q)
		}
	}

	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), "\nStrategy index on the prefix model:\n\n")
	if !ok {
		t.Fatal("docs/benchmarks.md has no table \"Strategy index on the prefix model:\"")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	if want := indexTable(indexRows); strings.TrimSpace(table) != want {
		t.Errorf("docs/benchmarks.md's index table reads\n%s\nthis test holds\n%s", table, want)
	}

	// The README's headline quotes the 500-tool fresh session's last prompts, their
	// ratio, and the range of the cached shares at 500 tools.
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := indexRows[6]
	lo, hi := indexRows[6].cached, indexRows[6].cached
	for _, r := range indexRows[6:] {
		lo, hi = min(lo, r.cached), max(hi, r.cached)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	want := fmt.Sprintf("prompt is %.2f× mask's (%s against %s tokens at a session's last turn), %s–%s %% of it cached", float64(fresh.indexLast)/float64(fresh.maskLast),
		thousands(float64(fresh.indexLast)), thousands(float64(fresh.maskLast)), lo, hi)
	if fresh.n != 500 || fresh.sc != ScenarioFresh || !strings.Contains(text, want) {
		t.Errorf("README.md's headline does not quote %q", want)
	}
}

// indexTable renders rows as docs/benchmarks.md's table.
func indexTable(rows []indexRow) string {
	label := map[string]string{ScenarioFresh: "fresh session", ScenarioProfile: "sessions 2–10 of a profile", ScenarioLong: "one 80-turn session"}
	var b strings.Builder
	b.WriteString("| catalog | scenario | computed: index | computed: mask | index cached after turn 0 | last prompt: index | last prompt: mask | index / mask | auto served |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|---|")
	for _, r := range rows {
		fmt.Fprintf(&b, "\n| %d tools | %s | %s | %s | %s %% | %s | %s | %.2f× | %s |", r.n, label[r.sc],
			thousands(float64(r.index)), thousands(float64(r.mask)), r.cached,
			thousands(float64(r.indexLast)), thousands(float64(r.maskLast)), float64(r.indexLast)/float64(r.maskLast), r.auto)
	}
	return b.String()
}
