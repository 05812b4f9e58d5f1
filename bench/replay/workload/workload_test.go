package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/toolsearch/tokens"
)

func TestCatalog_ByteStableNestedAndRenderedAsToolsearchDoes(t *testing.T) {
	small, err := NewCatalog(CatalogOptions{Tools: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := NewCatalog(CatalogOptions{Tools: 20, Seed: 1})
	if !bytes.Equal(small.JSON, again.JSON) {
		t.Fatal("the same options gave different bytes")
	}
	other, _ := NewCatalog(CatalogOptions{Tools: 20, Seed: 2})
	if bytes.Equal(small.JSON, other.JSON) {
		t.Error("another seed gave the same catalog")
	}
	big, err := NewCatalog(CatalogOptions{Tools: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(small.Specs, big.Specs[:20]); diff != "" {
		t.Errorf("the 20-tool catalog is not the start of the 500-tool one (-small +big):\n%s", diff)
	}
	ix, err := big.Index()
	if err != nil {
		t.Fatal(err)
	}
	// toolsearch orders the catalog its own way; each tool must keep its bytes.
	var ours, rendered []string
	for _, b := range [][]byte{big.JSON, ix.Catalog().Render()} {
		var tools []json.RawMessage
		if err := json.Unmarshal(b, &tools); err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, tl := range tools {
			s = append(s, string(tl))
		}
		slices.Sort(s)
		rendered, ours = s, rendered
	}
	if diff := cmp.Diff(ours, rendered); diff != "" {
		t.Errorf("toolsearch renders the tools differently: the prompt would not be these bytes (-generated +rendered):\n%s", diff)
	}
	valid := regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	seen := map[string]bool{}
	for _, s := range big.Specs {
		if !valid.MatchString(s.Name) || seen[s.Name] {
			t.Errorf("name %q is invalid for an engine or repeated", s.Name)
		}
		seen[s.Name] = true
	}
	if _, err := NewCatalog(CatalogOptions{Tools: MaxTools() + 1}); err == nil {
		t.Error("a catalog larger than the generator can make was accepted")
	}
}

func TestCatalog_AboutOneHundredFiftyTokensATool(t *testing.T) {
	cat, err := NewCatalog(CatalogOptions{Tools: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(cat.JSON, &tools); err != nil {
		t.Fatal(err)
	}
	lo, hi, sum := 1<<30, 0, 0
	for _, tl := range tools {
		n := c.ToolTokens(tl)
		lo, hi, sum = min(lo, n), max(hi, n), sum+n
	}
	mean := float64(sum) / float64(len(tools))
	if mean < 120 || mean > 180 {
		t.Errorf("mean %.0f tokens a tool (min %d, max %d), want about 150", mean, lo, hi)
	}
	t.Logf("tokens a tool: mean %.0f, min %d, max %d", mean, lo, hi)
}

func TestSession_DiscoversThreeToEightToolsSpreadOverTheSession(t *testing.T) {
	cat, _ := NewCatalog(CatalogOptions{Tools: 100, Seed: 1})
	counts := map[int]int{}
	for seed := range uint64(60) {
		s, err := NewSession(cat, SessionOptions{Turns: 20, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Tasks) != 10 {
			t.Fatalf("%d tasks in 20 turns", len(s.Tasks))
		}
		counts[len(s.Tools)]++
		if len(s.Tools) < 3 || len(s.Tools) > 8 {
			t.Errorf("seed %d: %d tools", seed, len(s.Tools))
		}
		var order []string
		seen := map[string]bool{}
		for _, tk := range s.Tasks {
			if !seen[tk.Name] {
				seen[tk.Name] = true
				order = append(order, tk.Name)
			}
		}
		var want []string
		for _, tl := range s.Tools {
			want = append(want, tl.Name)
		}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("seed %d: tools first used out of discovery order (-want +got):\n%s", seed, diff)
		}
		again, _ := NewSession(cat, SessionOptions{Turns: 20, Seed: seed})
		if diff := cmp.Diff(s, again); diff != "" {
			t.Errorf("seed %d: not deterministic:\n%s", seed, diff)
		}
	}
	if len(counts) < 4 {
		t.Errorf("tool counts over 60 seeds: %v; want a spread over 3..8", counts)
	}
}

func TestModel_DecidesFromTheRequestAlone(t *testing.T) {
	const x = "github_create_issue"
	user := `{"role":"user","content":"Task 1: please create the issue in GitHub for ticket R-100 (tool github_create_issue)."}`
	whole := `[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}},{"type":"function","function":{"name":"github_create_issue"}}]`
	metaOnly := `[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"load_tool"}}]`
	eager := `[{"type":"function","function":{"name":"github_create_issue"}}]`
	loadCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"github_create_issue\"}"}}]}`
	loadResult := `{"role":"tool","tool_call_id":"c1","content":"{\"success\":true}"}`
	strayCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"github_create_issue","arguments":"{}"}}]}`
	strayError := `{"role":"tool","tool_call_id":"c1","content":"{\"error\":\"Tool github_create_issue is not loaded\"}"}`
	realResult := `{"role":"tool","tool_call_id":"c2","content":"{\"ok\":true}"}`
	cases := []struct {
		name    string
		stray   float64
		msgs    []string
		tools   string
		choice  string
		allowed []string
		call    string // "" for text
		isStray bool
	}{
		{"eager_calls_at_once", 0, []string{user}, eager, "", nil, x, false},
		{"unloaded_loads_first", 0, []string{user}, whole, "", nil, "load_tool", false},
		{"after_the_load_calls_the_tool", 0, []string{user, loadCall, loadResult}, whole, "", nil, x, false},
		{"loaded_in_an_earlier_task_calls_at_once", 0, []string{loadCall, loadResult, user}, whole, "", nil, x, false},
		{"strays_where_it_sees_the_tool", 1, []string{user}, whole, "", nil, x, true},
		{"a_mask_turns_the_stray_into_a_load", 1, []string{user}, whole, "", []string{"search_tools", "load_tool"}, "load_tool", false},
		{"allowed_tools_turns_the_stray_into_a_load", 1, []string{user}, whole,
			`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"load_tool"}}]}}`, nil, "load_tool", false},
		{"no_stray_to_a_tool_it_cannot_see", 1, []string{user}, metaOnly, "", nil, "load_tool", false},
		{"after_the_error_loads", 1, []string{user, strayCall, strayError}, whole, "", nil, "load_tool", false},
		{"after_the_result_answers", 0, []string{user, loadCall, loadResult, strings.Replace(strayCall, "c1", "c2", 1), realResult}, whole, "", nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"messages":[` + strings.Join(c.msgs, ",") + `],"tools":` + c.tools
			if c.choice != "" {
				body += `,"tool_choice":` + c.choice
			}
			body += "}"
			r, err := Model{Stray: c.stray}.Decide([]byte(body), c.allowed)
			if err != nil {
				t.Fatal(err)
			}
			if r.Call != c.call || r.Stray != c.isStray {
				t.Errorf("called %q (stray %v), want %q (stray %v): %s", r.Call, r.Stray, c.call, c.isStray, r.Message)
			}
			wantFinish := "tool_calls"
			if c.call == "" {
				wantFinish = "stop"
			}
			if r.Finish != wantFinish || !json.Valid(r.Message) {
				t.Errorf("finish %q, message %s", r.Finish, r.Message)
			}
		})
	}
}

func TestModel_StraysAtAboutTheGivenShare(t *testing.T) {
	m := Model{Stray: 0.25}
	n := 0
	for i := range 2000 {
		if m.strays(fmt.Sprintf("Task %d", i), "fs_get_file") {
			n++
		}
	}
	if n < 400 || n > 600 {
		t.Errorf("%d strays in 2000 tasks at 0.25", n)
	}
}
