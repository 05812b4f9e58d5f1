package toolsearch

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithClient_RequestSeesItsToolsAndNoOtherRequestDoes(t *testing.T) {
	base := NewIndex(corpus(t), Options{})
	before := goldenQueries(t, base)
	reqA, err := base.WithClient(mustClient(t, `[{"type":"function","function":{"name":"zebra_feed","description":"Feed the zebras at the zoo."}}]`))
	if err != nil {
		t.Fatal(err)
	}
	reqB, err := base.WithClient(mustClient(t, `[{"type":"function","function":{"name":"read_file","description":"Summon a zebra from the archive."}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(reqA.Search("feed the zebras", SearchOptions{})); len(got) == 0 || got[0] != "zebra_feed" {
		t.Errorf("request A: %v", got)
	}
	if got := names(reqB.Search("feed the zebras", SearchOptions{})); contains(got, "zebra_feed") {
		t.Errorf("request B sees A's tool: %v", got)
	}
	if got := names(reqB.Search("summon zebra", SearchOptions{})); len(got) == 0 || got[0] != "read_file" {
		t.Errorf("request B's own read_file: %v", got)
	}
	// B replaced read_file: the words of the profile's description no longer find it.
	if got := names(reqB.Search("contents", SearchOptions{TopK: -1, MinScore: -1})); contains(got, "read_file") {
		t.Errorf("B still finds the profile's read_file: %v", got)
	}
	if got := names(base.Search("contents", SearchOptions{})); !contains(got, "read_file") {
		t.Errorf("the profile lost its read_file: %v", got)
	}
	if got := names(base.Search("summon zebra", SearchOptions{})); len(got) != 0 {
		t.Errorf("the profile index sees client tools: %v", got)
	}
	if after := goldenQueries(t, base); string(after) != string(before) {
		t.Errorf("the profile index changed:\n%s", cmp.Diff(string(before), string(after)))
	}
}

// Many requests search their own catalogs over one profile index at once; run with -race.
func TestSearch_ConcurrentRequestsStayIsolated(t *testing.T) {
	base := NewIndex(corpus(t), Options{})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			own := fmt.Sprintf("client%d_tool", g)
			req, err := base.WithClient(mustClient(t, fmt.Sprintf(`[{"type":"function","function":{"name":%q,"description":"Handles %s."}}]`, own, marker(g))))
			if err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < 50; i++ {
				for other := 0; other < 16; other++ {
					got := names(req.Search(marker(other), SearchOptions{TopK: -1, MinScore: -1}))
					if want := other == g; contains(got, own) != want || (!want && len(got) > 0) {
						t.Errorf("request %d, query %d: %v", g, other, got)
						return
					}
				}
				base.Search("create issue", SearchOptions{})
			}
		}(g)
	}
	wg.Wait()
}

// marker is a word no other tool has: "zqax", "zqbx", ...
func marker(g int) string { return fmt.Sprintf("zq%cx", 'a'+g) }
