package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/maskgate/maskgate/toolsearch"
)

// denyAdmin is a policy: db_query is hidden from search and refused at load, and
// send_email may be found but not loaded.
func denyAdmin(p Phase, name string) bool {
	switch name {
	case "db_query":
		return false
	case "send_email":
		return p != PhaseLoad
	}
	return true
}

// TestExecute_Golden holds the exact content bytes of meta-tool calls: what the model reads
// is part of the prompt, so it must not drift.
func TestExecute_Golden(t *testing.T) {
	cases := []struct {
		name   string
		call   Call
		loaded []string
		auto   bool
		policy bool
	}{
		{"search", Call{SearchTools, `{"query":"open an issue on github"}`}, nil, false, false},
		{"search one result", Call{SearchTools, `{"query":"weather forecast"}`}, nil, false, false},
		{"search nothing found", Call{SearchTools, `{"query":"quantum teleportation"}`}, nil, false, false},
		{"search namespace", Call{SearchTools, `{"query":"git.*"}`}, nil, false, false},
		{"search keeps html characters", Call{SearchTools, `{"query":"sql database query"}`}, nil, false, false},
		{"search policy hides", Call{SearchTools, `{"query":"sql database query"}`}, nil, false, true},
		{"search double-encoded arguments", Call{SearchTools, `"{\"query\":\"slack message\"}"`}, nil, false, false},
		{"search auto_load", Call{SearchTools, `{"query":"slack"}`}, []string{"slack_list_channels"}, true, false},
		{"search auto_load skips load-refused", Call{SearchTools, `{"query":"send an email"}`}, nil, true, true},
		{"search invalid json", Call{SearchTools, `{"query":`}, nil, false, false},
		{"search missing query", Call{SearchTools, `{"q2":"x"}`}, nil, false, false},
		{"search empty arguments", Call{SearchTools, ``}, nil, false, false},
		{"search query not a string", Call{SearchTools, `{"query":42}`}, nil, false, false},
		{"load one", Call{LoadTool, `{"toolName":"git.commit"}`}, nil, false, false},
		{"load several", Call{LoadTool, `{"toolNames":["git.push","get_weather","git.push"]}`}, nil, false, false},
		{"load already loaded", Call{LoadTool, `{"toolNames":["git.push","git.status"]}`}, []string{"git.push"}, false, false},
		{"load namespace", Call{LoadTool, `{"toolName":"github_*"}`}, nil, false, false},
		{"load unknown with suggestion", Call{LoadTool, `{"toolName":"github_create_isue"}`}, nil, false, false},
		{"load unknown without suggestion", Call{LoadTool, `{"toolName":"zzz"}`}, nil, false, false},
		{"load partly unknown", Call{LoadTool, `{"toolNames":["slack_post_message","nope.nothing"]}`}, nil, false, false},
		{"load refused", Call{LoadTool, `{"toolName":"send_email"}`}, nil, false, true},
		{"load unknown namespace", Call{LoadTool, `{"toolName":"jira.*"}`}, nil, false, false},
		{"load snake_case key", Call{LoadTool, `{"tool_name":"git.status"}`}, nil, false, false},
		{"load missing name", Call{LoadTool, `{}`}, nil, false, false},
		{"load wrong type", Call{LoadTool, `{"toolNames":[1,2]}`}, nil, false, false},
		{"not a meta-tool", Call{"git.commit", `{}`}, nil, false, false},
	}
	var b strings.Builder
	for _, c := range cases {
		env := testEnv(t, c.loaded...)
		env.AutoLoad = c.auto
		if c.policy {
			env.Allowed = denyAdmin
		}
		out := Execute(context.Background(), c.call, env)
		if !json.Valid([]byte(out.Content)) {
			t.Errorf("%s: content is not JSON: %s", c.name, out.Content)
		}
		fmt.Fprintf(&b, "== %s: %s %s\ncontent: %s\nload: %q\nerr: %v\n\n", c.name, c.call.Name, c.call.Arguments, out.Content, out.Load, out.Err)
	}
	golden(t, "execute.golden.txt", []byte(b.String()))
}

func TestExecute_SameCallSameBytes(t *testing.T) {
	env := testEnv(t)
	call := Call{SearchTools, `{"query":"list github issues"}`}
	first := Execute(context.Background(), call, env)
	for range 50 {
		if got := Execute(context.Background(), call, testEnv(t)); got.Content != first.Content {
			t.Fatalf("content changed between runs:\n%s\n%s", first.Content, got.Content)
		}
	}
}

func TestExecute_ScoresRoundedToTwoDecimals(t *testing.T) {
	out := Execute(context.Background(), Call{SearchTools, `{"query":"github issues repository"}`}, testEnv(t))
	var c searchContent
	if err := json.Unmarshal([]byte(out.Content), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range c.Results {
		if r.Score != round2(r.Score) || r.Score <= 0 || r.Score > 1 {
			t.Errorf("%s: score %v is not a two-decimal relevance", r.Name, r.Score)
		}
	}
}

func TestExecute_LoadFollowsRequestOrderWithoutDuplicates(t *testing.T) {
	out := Execute(context.Background(), Call{LoadTool, `{"toolName":"send_email","toolNames":["git.*","git.push","send_email"]}`}, testEnv(t, "git.status"))
	want := []string{"send_email", "git.commit", "git.push"}
	if diff := cmp.Diff(want, out.Load); diff != "" || out.Err {
		t.Errorf("Load (-want +got), err %v:\n%s", out.Err, diff)
	}
}

func TestExecute_PolicyRefusesEveryPath(t *testing.T) {
	env := testEnv(t)
	env.Allowed = denyAdmin
	for _, args := range []string{`{"toolName":"db_query"}`, `{"toolNames":["db_query"]}`, `{"toolName":"db_*"}`} {
		out := Execute(context.Background(), Call{LoadTool, args}, env)
		if len(out.Load) != 0 || !out.Err {
			t.Errorf("%s: loaded %q, err %v; want refused", args, out.Load, out.Err)
		}
	}
	out := Execute(context.Background(), Call{SearchTools, `{"query":"db_query"}`}, env)
	if strings.Contains(out.Content, `"db_query"`) {
		t.Errorf("search shows a tool the search phase hides: %s", out.Content)
	}
}

// plainSearcher has no OptionsSearcher: Execute filters after the search.
type plainSearcher struct{ ix *toolsearch.Index }

func (p plainSearcher) Search(text string, topK int, minScore float64) []toolsearch.Result {
	return p.ix.Search(text, toolsearch.SearchOptions{TopK: topK, MinScore: minScore})
}

func TestExecute_PlainSearcherIsFiltered(t *testing.T) {
	ix := testIndex(t)
	env := Env{Searcher: plainSearcher{ix}, Names: ix.Catalog(), Allowed: func(_ Phase, n string) bool { return !strings.HasPrefix(n, "github") }}
	out := Execute(context.Background(), Call{SearchTools, `{"query":"github issue"}`}, env)
	if strings.Contains(out.Content, "github_") {
		t.Errorf("filtered tool in results: %s", out.Content)
	}
}

func TestExecute_NoSearcherNoNames(t *testing.T) {
	for _, call := range []Call{{SearchTools, `{"query":"x"}`}, {LoadTool, `{"toolName":"x"}`}} {
		out := Execute(context.Background(), call, Env{})
		if !out.Err || len(out.Load) != 0 || !json.Valid([]byte(out.Content)) {
			t.Errorf("%s with an empty Env: %+v", call.Name, out)
		}
	}
}

func TestNotLoadedError(t *testing.T) {
	got := NotLoadedError(`git.commit`)
	want := `{"error":"Tool \"git.commit\" is not loaded; call load_tool with {\"toolName\": \"git.commit\"} first."}`
	if got != want {
		t.Errorf("NotLoadedError =\n%s\nwant\n%s", got, want)
	}
	for _, name := range []string{"a\"b", "\x00\xff", strings.Repeat("x", 1000)} {
		if c := NotLoadedError(name); !json.Valid([]byte(c)) || len(c) > 600 {
			t.Errorf("NotLoadedError(%.20q) = %.80s…", name, c)
		}
	}
	if got := UnknownToolError("foo"); got != `{"error":"Tool \"foo\" does not exist; call search_tools first."}` {
		t.Errorf("UnknownToolError = %s", got)
	}
}
