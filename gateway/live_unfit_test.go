package gateway_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/kvcache"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// explained is a chooser whose decision is given: remove, with index among its estimates
// and mask and validate left out for the context window.
type explained struct{ d kvcache.Decision }

func (e explained) Choose(gateway.ChoiceInput) gateway.Strategy { return e.d.Strategy }
func (e explained) Explain(string, string) (kvcache.Decision, bool) {
	return e.d, true
}

// An auto row carries every estimate the decision holds, index's included, and the
// strategies left out because their sessions outgrow the context window.
func TestAdminEvents_AutoRowsCarryIndexAndTheUnfit(t *testing.T) {
	d := kvcache.Decision{Strategy: kvcache.StrategyRemove, Reason: "remove is cheapest; [mask validate] do not fit the 65536-token context",
		Estimates: []kvcache.Estimate{{Strategy: kvcache.StrategyRemove, Seconds: 4.5}, {Strategy: kvcache.StrategyIndex, Seconds: 4.75}},
		Unfit:     []kvcache.Strategy{kvcache.StrategyMask, kvcache.StrategyValidate}}
	sc := &scripted{replies: []string{stopReply}}
	gw := scriptedGateway(t, sc, func(o *gateway.Options) {
		o.AdminKey = testAdminKey
		o.State = state.NewMemory(state.Options{})
		o.Strategy = gateway.StrategyAuto
		o.Tools = bigCatalog(t)
		o.Chooser = explained{d}
	})
	resp, body := postWithThread(t, gw, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "t0")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	es := openEvents(t, gw.URL)
	snap := es.until(t, 10*time.Second, "an auto row", func(s observe.LiveSnapshot) bool {
		return len(s.Rows) == 1 && s.Rows[0].Auto != nil
	})
	a := snap.Rows[0].Auto
	got := fmt.Sprintf("%s %v %v", a.Strategy, a.Estimates, a.Unfit)
	if want := "remove [{remove 4.5} {index 4.75}] [mask validate]"; got != want {
		t.Errorf("auto %s, want %s", got, want)
	}
}
