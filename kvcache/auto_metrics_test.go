package kvcache

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCostModel_MetricsLintAndCountSwitches(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, _ := newModel(constrainer, long)
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.ObserveCatalog("p", "gpu0", hugeCat)
	play(m, "p", 100, long)
	m.Decide("p", "gpu0") // remove
	m.ObserveCatalog("p", "gpu0", largeCat)
	for range 3 {
		m.Decide("p", "gpu0") // to mask on the third
	}

	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	want := `
# HELP maskgate_auto_strategy_selected 1 for the strategy the auto strategy uses for the profile on the backend, 0 for the others open to it.
# TYPE maskgate_auto_strategy_selected gauge
maskgate_auto_strategy_selected{backend="gpu0",profile="p",strategy="mask"} 1
maskgate_auto_strategy_selected{backend="gpu0",profile="p",strategy="remove"} 0
maskgate_auto_strategy_selected{backend="gpu0",profile="p",strategy="validate"} 0
# HELP maskgate_auto_strategy_switches_total Times the auto strategy moved a profile on a backend from one strategy to another.
# TYPE maskgate_auto_strategy_switches_total counter
maskgate_auto_strategy_switches_total{backend="gpu0",from="remove",profile="p",to="mask"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"maskgate_auto_strategy_selected", "maskgate_auto_strategy_switches_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m, "maskgate_auto_strategy_estimate_seconds"); n != 3 {
		t.Errorf("%d estimate series, want 3 (mask, remove, validate)", n)
	}
}

// The estimate gauges carry the modelled seconds per session: on an engine and a
// workload simple enough to work out by hand (TestSessionSeconds_HandComputed's), each
// strategy's gauge is the figure worked out there, and the cheapest is selected.
func TestCostModel_MetricsCarryHandComputedEstimates(t *testing.T) {
	e := Engine{
		Capabilities: Capabilities{Constrains: true, CachesPrefixes: true},
		Prefill:      PrefillCost{Fixed: 0.01, PerToken: 0.001},
		Decode:       DecodeCost{PerToken: 0.002},
	}
	// Nothing observed but the catalog: the workload is the prior, one session.
	prior := Workload{TurnsPerSession: 2, InputTokensPerTurn: 100, OutputTokensPerTurn: 10, LoadsPerSession: 2, TokensPerLoad: 50, StraysPerTurn: 0.5}
	m, _ := newModel(e, prior)
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.ObserveCatalog("p", "gpu0", CatalogSize{Tools: 5, Tokens: 1000, MetaTokens: 100})
	m.Decide("p", "gpu0")

	want := map[string]float64{
		"eager":    1.0 + 2*0.13,
		"mask":     1.1 + 2*0.24,
		"remove":   0.1 + 0.39 + 0.56,
		"validate": 1.1 + 2*0.305,
		// allowed_tools is not open to this engine: no series.
	}
	got, selected := map[string]float64{}, map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			var st string
			for _, l := range mt.GetLabel() {
				if l.GetName() == "strategy" {
					st = l.GetValue()
				}
			}
			switch mf.GetName() {
			case "maskgate_auto_strategy_estimate_seconds":
				got[st] = mt.GetGauge().GetValue()
			case "maskgate_auto_strategy_selected":
				selected[st] = mt.GetGauge().GetValue()
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("estimates for %v, want %v", got, want)
	}
	for st, w := range want {
		if g, ok := got[st]; !ok || !near(g, w, 1e-9) {
			t.Errorf("estimate for %s = %v, want %.4f", st, g, w)
		}
	}
	wantSelected := map[string]float64{"eager": 0, "mask": 0, "remove": 1, "validate": 0}
	if diff := cmp.Diff(wantSelected, selected); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
}
