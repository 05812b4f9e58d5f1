package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, rules ...Rule) *Policy {
	t.Helper()
	p, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type check struct {
	phase Phase
	req   Request
	tool  string
	want  bool
}

func run(t *testing.T, p *Policy, checks []check) {
	t.Helper()
	for _, c := range checks {
		if got := p.Allowed(c.phase, c.req, c.tool); got != c.want {
			t.Errorf("Allowed(%s, %+v, %q) = %v, want %v", c.phase, c.req, c.tool, got, c.want)
		}
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestAllowed_SearchPhaseHidesOnlyFromSearch(t *testing.T) {
	p := mustCompile(t, Rule{Phases: []Phase{Search}, Tools: []string{"delete_*", "admin.reset"}})
	run(t, p, []check{
		{Search, Request{}, "delete_repo", false},
		{Search, Request{}, "admin.reset", false},
		{Search, Request{}, "admin.resets", true}, // globs match the whole name
		{Search, Request{}, "list_repos", true},
		{Load, Request{}, "delete_repo", true},
		{Active, Request{}, "delete_repo", true},
	})
}

func TestAllowed_LoadPhaseByProfileAndNamespace(t *testing.T) {
	p := mustCompile(t, Rule{Name: "no github for interns", Phases: []Phase{Load}, Profiles: []string{"intern*"},
		Namespaces: []string{"github"}})
	ns := func(tool string) string {
		if strings.HasPrefix(tool, "github_") {
			return "github"
		}
		return ""
	}
	intern := Request{Profile: "intern-2025", Namespace: ns}
	staff := Request{Profile: "staff", Namespace: ns}
	run(t, p, []check{
		{Load, intern, "github_create_issue", false},
		{Load, intern, "slack_post", true},
		{Load, staff, "github_create_issue", true},
		{Search, intern, "github_create_issue", true},
		// Without a Namespace function, the namespace is the part before the first '.'.
		{Load, Request{Profile: "intern"}, "github.create_issue", false},
		{Load, Request{Profile: "intern"}, "github_create_issue", true},
	})
}

func TestAllowed_ActivePhaseByHeaderAndMetadata(t *testing.T) {
	p := mustCompile(t,
		Rule{Phases: []Phase{Active}, Headers: []Match{{Name: "x-environment", Value: "prod*"}}, Tools: []string{"shell.*"}},
		Rule{Phases: []Phase{Active, Load}, Metadata: []Match{{Name: "tier", Value: "free"}}, Tools: []string{"web.fetch"}},
		Rule{Phases: []Phase{Active}, Headers: []Match{{Name: "X-Readonly"}}, Tools: []string{"*.write"}},
	)
	prod := Request{Header: hdr("X-Environment", "staging", "X-Environment", "production")}
	free := NewRequest("", nil, json.RawMessage(`{"tier":"free"}`), nil)
	paid := NewRequest("", nil, json.RawMessage(`{"tier":"paid"}`), nil)
	run(t, p, []check{
		{Active, prod, "shell.exec", false}, // any value of the header may match
		{Active, Request{Header: hdr("X-Environment", "dev")}, "shell.exec", true},
		{Active, Request{}, "shell.exec", true}, // a missing header is no match
		{Search, prod, "shell.exec", true},
		{Active, free, "web.fetch", false},
		{Load, free, "web.fetch", false},
		{Active, paid, "web.fetch", true},
		{Active, Request{}, "web.fetch", true}, // no metadata: the key is missing
		{Active, Request{Header: hdr("X-Readonly", "")}, "files.write", false},
		{Active, Request{Header: hdr("X-Readonly", "")}, "files.read", true},
	})
}

func TestAllowed_RuleThatErrorsDenies(t *testing.T) {
	p := mustCompile(t,
		Rule{Phases: []Phase{Load}, Metadata: []Match{{Name: "tier", Value: "free"}}, Tools: []string{"web.*"}},
		Rule{Phases: []Phase{Load}, Headers: []Match{{Name: "X-Team", Value: "ops"}}, Tools: []string{"shell.*"}},
	)
	for _, raw := range []string{`"free"`, `{"tier":1}`, `[1]`, `{`} {
		req := NewRequest("", nil, json.RawMessage(raw), nil)
		if req.MetadataErr == nil {
			t.Errorf("metadata %s: no error", raw)
		}
		run(t, p, []check{
			{Load, req, "web.fetch", false}, // the metadata rule cannot be decided: it denies
			{Load, req, "files.read", true}, // its other conditions still apply
			{Load, req, "shell.exec", true}, // rules without metadata conditions are unaffected
		})
	}
	if req := NewRequest("", nil, json.RawMessage(`null`), nil); req.MetadataErr != nil {
		t.Errorf("null metadata: %v", req.MetadataErr)
	}
	if got := p.Allowed(Phase("sarch"), Request{}, "files.read"); got {
		t.Error("an unknown phase was allowed")
	}
}

func TestAllowed_NoRulesAllowEverything(t *testing.T) {
	var nilPolicy *Policy
	for _, p := range []*Policy{nilPolicy, {}, mustCompile(t)} {
		for _, ph := range Phases {
			if !p.Allowed(ph, Request{}, "anything") || !p.Empty(ph) {
				t.Errorf("%v denied %s", p, ph)
			}
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		glob, s string
		want    bool
	}{
		{"git.*", "git.commit", true}, {"git.*", "gitx.commit", false}, {"git.*", "git.", true},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"a?c", "aéc", true},
		{"[a-c]x", "bx", true}, {"[!a-c]x", "bx", false}, {"[!a-c]x", "dx", true},
		{`a\*`, "a*", true}, {`a\*`, "ab", false}, {"a.b", "axb", false}, {"a+", "aa", false},
		{"[]]", "]", true}, {"*", "", true}, {"exact", "exact", true}, {"exact", "exactly", false},
	}
	for _, tt := range tests {
		re, err := compileGlob(tt.glob)
		if err != nil {
			t.Errorf("%q: %v", tt.glob, err)
			continue
		}
		if got := re.MatchString(tt.s); got != tt.want {
			t.Errorf("glob %q on %q = %v, want %v", tt.glob, tt.s, got, tt.want)
		}
	}
}

func TestCompile_ErrorsNameTheField(t *testing.T) {
	tests := []struct {
		rules []Rule
		want  string
	}{
		{[]Rule{{Phases: []Phase{Search}}, {}}, "rules[1].phases: required"},
		{[]Rule{{Phases: []Phase{Search, "hide"}}}, `rules[0].phases[1]: unknown phase "hide" (search, load or active)`},
		{[]Rule{{Phases: []Phase{Load}, Tools: []string{"ok", "git.[*"}}}, `rules[0].tools[1]: glob "git.[*" has an unclosed '['`},
		{[]Rule{{Phases: []Phase{Load}, Profiles: []string{`a\`}}}, `rules[0].profiles[0]: glob "a\\" ends with a lone '\'`},
		{[]Rule{{Phases: []Phase{Load}, Namespaces: []string{"[z-a]"}}}, `rules[0].namespaces[0]: glob "[z-a]"`},
		{[]Rule{{Phases: []Phase{Load}, Headers: []Match{{Value: "x"}}}}, "rules[0].headers[0].name: required"},
		{[]Rule{{Phases: []Phase{Load}, Metadata: []Match{{Name: "k", Value: "[!]"}}}}, `rules[0].metadata[0].value: glob "[!]" has an empty class`},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := Compile(tt.rules)
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RuleError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}
