package kvcache

import (
	"strings"
	"testing"

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
