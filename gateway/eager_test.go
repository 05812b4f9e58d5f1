package gateway_test

import (
	"slices"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/profile"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// A profile's catalog under eager_below goes to the engine whole, with the client's own
// tools and no meta-tools, without asking auto's chooser; with EagerBelow negative (the
// config's eager_below: 0) size decides nothing and the chooser does.
func TestStrategy_SmallProfileCatalogIsSentWholeWithTheClientsTools(t *testing.T) {
	const body = `{"model":"m1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"client_tool","parameters":{"type":"object"}}}]}`
	for _, tc := range []struct {
		name       string
		eagerBelow int
		strategy   string
		tools      []string
		asked      int
	}{
		{"default", 0, "eager", []string{"client_tool", "p_00", "p_01", "p_02"}, 0},
		{"off", -1, "remove", []string{"search_tools", "load_tool", "client_tool"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &fixedChooser{say: gateway.StrategyRemove}
			sc := &scripted{replies: []string{stopReply}}
			gw := scriptedGateway(t, sc, func(o *gateway.Options) {
				o.State, o.Chooser, o.EagerBelow = state.NewMemory(state.Options{}), ch, tc.eagerBelow
				o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: profileCatalog(t, "p", 3, profile.Spec{}), EagerBelow: tc.eagerBelow}}
			})
			resp, out := postWithThread(t, gw, body, "small")
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, out)
			}
			got := toolNames(t, sc.bodies[0]["tools"])
			if tc.strategy == "eager" {
				slices.Sort(got) // the catalog's own order
			}
			if !slices.Equal(got, tc.tools) {
				t.Errorf("the engine got tools %v, want %v", got, tc.tools)
			}
			if h := resp.Header.Get(gateway.HeaderStrategy); h != tc.strategy {
				t.Errorf("X-Maskgate-Strategy %q, want %q", h, tc.strategy)
			}
			if len(ch.got) != tc.asked {
				t.Errorf("the chooser was asked %d times, want %d", len(ch.got), tc.asked)
			} else if tc.asked > 0 && ch.got[0].CatalogTools != 4 {
				t.Errorf("the chooser saw %d tools, want the profile's 3 and the client's", ch.got[0].CatalogTools)
			}
		})
	}
}
