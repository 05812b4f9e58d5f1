package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/toolsearch/policy"
)

func TestParse_FilterWhen(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(`filters:
  - name: pro only
    phases: [search, load, active]
    tools: ["admin.*"]
    when: {not: {field: metadata.plan, equals: pro}}
  - name: no deploys from ci without approval
    phases: [load]
    tools: [deploy]
    when:
      all:
        - {field: key, prefix: ci-}
        - {field: header.X-Approved, exists: false}
        - any:
            - {field: header.x-env, in: [prod, production]}
            - {field: profile, exists: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	pro, ci, f := "pro", "ci-", false
	yes := true
	wantCfg := []*Cond{
		{Not: &Cond{Field: "metadata.plan", Equals: &pro}},
		{All: []Cond{
			{Field: "key", Prefix: &ci},
			{Field: "header.X-Approved", Exists: &f},
			{Any: []Cond{
				{Field: "header.x-env", In: []string{"prod", "production"}},
				{Field: "profile", Exists: &yes},
			}},
		}},
	}
	wantPolicy := []policy.Cond{
		{Not: &policy.Cond{Field: "metadata.plan", Op: policy.Equals, Values: []string{"pro"}}},
		{All: []policy.Cond{
			{Field: "key", Op: policy.Prefix, Values: []string{"ci-"}},
			{Not: &policy.Cond{Field: "header.X-Approved", Op: policy.Exists}},
			{Any: []policy.Cond{
				{Field: "header.x-env", Op: policy.In, Values: []string{"prod", "production"}},
				{Field: "profile", Op: policy.Exists},
			}},
		}},
	}
	for i, f := range cfg.Filters {
		if diff := cmp.Diff(wantCfg[i], f.When); diff != "" {
			t.Errorf("filters[%d].when (-want +got):\n%s", i, diff)
		}
		got := f.When.Policy()
		if diff := cmp.Diff(wantPolicy[i], got); diff != "" {
			t.Errorf("filters[%d].when.Policy() (-want +got):\n%s", i, diff)
		}
		if err := got.Check(); err != nil {
			t.Errorf("filters[%d].when.Policy().Check() = %v", i, err)
		}
	}
}

// TestParse_FilterWhenPlan is Mastra's ToolSearchProcessor example end to end, from the
// file to the policy: free plan denied, pro allowed, no plan denied.
func TestParse_FilterWhenPlan(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(`filters:
  - phases: [load]
    tools: [admin.reset]
    when: {not: {field: metadata.plan, equals: pro}}
`))
	if err != nil {
		t.Fatal(err)
	}
	when := cfg.Filters[0].When.Policy()
	p, err := policy.Compile([]policy.Rule{{Phases: []policy.Phase{policy.Load}, Tools: cfg.Filters[0].Tools, When: &when}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		metadata string
		want     bool
	}{{`{"plan":"free"}`, false}, {`{"plan":"pro"}`, true}, {``, false}, {`{"plan":7}`, false}} {
		req := policy.NewRequest("", nil, []byte(tt.metadata), nil)
		if got := p.Allowed(policy.Load, req, "admin.reset"); got != tt.want {
			t.Errorf("metadata %s: Allowed = %v, want %v", tt.metadata, got, tt.want)
		}
	}
}

func TestParse_FilterWhenErrorsNameFileLineAndKey(t *testing.T) {
	const head = "filters:\n  - phases: [load]\n    when: "
	deep := strings.Repeat("{not: ", maxCondDepth+1) + "{field: key, exists: true}" + strings.Repeat("}", maxCondDepth+1)
	for _, tt := range []struct{ name, yaml, want string }{
		{"empty", head + "{}\n",
			"g.yaml:3: filters[0].when: empty condition: set field with an operator (equals, in, exists or prefix), or all, any or not"},
		{"unknown field", head + "{field: plan, equals: pro}\n",
			`g.yaml:3: filters[0].when.field: unknown field "plan" (key, profile, header.NAME or metadata.NAME)`},
		{"bad header", head + "{field: header.X Env, exists: true}\n",
			`g.yaml:3: filters[0].when.field: "header.X Env": "X Env" is not a valid header name`},
		{"no operator", head + "{not: {field: metadata.plan}}\n",
			"g.yaml:3: filters[0].when.not.field: needs an operator: equals, in, exists or prefix"},
		{"operator without field", head + "{equals: pro}\n",
			"g.yaml:3: filters[0].when.field: required with equals: key, profile, header.NAME or metadata.NAME"},
		{"two operators", head + "{field: key, equals: a, prefix: b}\n",
			"g.yaml:3: filters[0].when.prefix: set one operator, not equals and prefix"},
		{"empty in", head + "{field: key, in: []}\n",
			"g.yaml:3: filters[0].when.in: empty list: give at least one value"},
		{"leaf and node", head + "{field: key, not: {field: key, exists: true}}\n",
			"g.yaml:3: filters[0].when.field: a condition is either a field with an operator or one of all, any and not (here: field and not); to combine them, list both under all"},
		{"two nodes", head + "{all: [{field: key, exists: true}], any: [{field: key, exists: true}]}\n",
			"g.yaml:3: filters[0].when.any: set only one of all, any and not (here: all and any); to combine them, list both under all"},
		{"empty all", head + "{all: []}\n",
			"g.yaml:3: filters[0].when.all: empty list: give at least one condition"},
		{"unknown key", head + "{field: key, op: equals}\n",
			"g.yaml:3: filters[0].when.op: unknown key (known keys here: field, equals, in, exists, prefix, all, any, not)"},
		{"exists not a bool", head + "{field: key, exists: maybe}\n",
			`g.yaml:3: filters[0].when.exists: expected true or false, got "maybe"`},
		{"too deep", head + deep + "\n",
			"g.yaml:3: filters[0].when" + strings.Repeat(".not", maxCondDepth) + ": conditions nest more than 32 deep"},
		{"nested, block style", `filters:
  - phases: [load]
  - phases: [search]
    when:
      any:
        - field: profile
          equals: a
        - not:
            field: metadata.plan
            in: []
`, "g.yaml:10: filters[1].when.any[1].not.in: empty list: give at least one value"},
		{"nested field", `filters:
  - phases: [load]
    when:
      all:
        - {field: key, exists: true}
        - {field: "header.", exists: true}
`, `g.yaml:6: filters[0].when.all[1].field: "header." names no header: write header.NAME`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("g.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestCondPolicy_RejectsWhatValidationRejects: a Cond that skipped validation converts
// to one that policy.Cond.Check rejects, never to a different condition that passes.
func TestCondPolicy_RejectsWhatValidationRejects(t *testing.T) {
	a, b, yes := "a", "b", true
	for _, c := range []Cond{
		{},
		{Field: "key"},
		{Field: "key", Equals: &a, Prefix: &b},
		{Field: "key", In: []string{}},
		{Equals: &a},
		{Field: "key", Exists: &yes, Not: &Cond{Field: "key", Exists: &yes}},
		{Equals: &a, All: []Cond{{Field: "key", Exists: &yes}}},
		{All: []Cond{{Field: "key", Exists: &yes}}, Any: []Cond{{Field: "key", Exists: &yes}}},
		{All: []Cond{}},
		{Not: &Cond{Field: "nope", Exists: &yes}},
	} {
		p := c.Policy()
		if err := p.Check(); err == nil {
			t.Errorf("%+v converts to %+v, which Check accepts", c, p)
		}
		cfg := &Config{}
		if err := cfg.checkCond("g.yaml", "when", &c); err == nil {
			t.Errorf("checkCond accepts %+v", c)
		}
	}
}
