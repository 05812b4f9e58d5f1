package policy

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

func leaf(field string, op Op, values ...string) Cond {
	return Cond{Field: field, Op: op, Values: values}
}

func not(c Cond) Cond       { return Cond{Not: &c} }
func all(cs ...Cond) Cond   { return Cond{All: cs} }
func anyOf(cs ...Cond) Cond { return Cond{Any: cs} }

var errBadMetadata = errors.New("metadata must be an object of strings")

func TestCondEval(t *testing.T) {
	full := Request{
		Key:      "alice",
		Profile:  "team-a",
		Header:   hdr("X-Plan", "pro", "X-Tag", "one", "X-Tag", "two", "X-Empty", ""),
		Metadata: map[string]string{"plan": "pro", "tier": "", "Region": "eu-west"},
	}
	bad := Request{Key: "alice", Header: hdr("X-Plan", "pro"), MetadataErr: errBadMetadata}
	tests := []struct {
		name    string
		cond    Cond
		req     Request
		want    bool
		wantErr bool
	}{
		{"key equals", leaf("key", Equals, "alice"), full, true, false},
		{"key equals other", leaf("key", Equals, "bob"), full, false, false},
		{"key is case-sensitive", leaf("key", Equals, "Alice"), full, false, false},
		{"key in", leaf("key", In, "bob", "alice"), full, true, false},
		{"key prefix", leaf("key", Prefix, "ali"), full, true, false},
		{"no key: exists false", leaf("key", Exists), Request{}, false, false},
		{"no key: equals empty false", leaf("key", Equals, ""), Request{}, false, false},
		{"no key: not exists", not(leaf("key", Exists)), Request{}, true, false},
		{"profile equals", leaf("profile", Equals, "team-a"), full, true, false},
		{"profile no glob", leaf("profile", Equals, "team-*"), full, false, false},
		{"profile prefix", leaf("profile", Prefix, "team-"), full, true, false},
		{"header equals", leaf("header.X-Plan", Equals, "pro"), full, true, false},
		{"header name any case", leaf("header.x-plan", Equals, "pro"), full, true, false},
		{"header value case-sensitive", leaf("header.X-Plan", Equals, "Pro"), full, false, false},
		{"header any value", leaf("header.X-Tag", Equals, "two"), full, true, false},
		{"header in over values", leaf("header.x-tag", In, "three", "one"), full, true, false},
		{"header empty exists", leaf("header.X-Empty", Exists), full, true, false},
		{"header empty equals empty", leaf("header.X-Empty", Equals, ""), full, true, false},
		{"header missing exists", leaf("header.X-Missing", Exists), full, false, false},
		{"header missing equals", leaf("header.X-Missing", Equals, ""), full, false, false},
		{"header missing prefix", leaf("header.X-Missing", Prefix, ""), full, false, false},
		{"nil header", leaf("header.X-Plan", Exists), Request{}, false, false},
		{"header not canonical in map", leaf("header.X-Plan", Equals, "pro"),
			Request{Header: http.Header{"x-plan": {"pro"}}}, true, false},
		{"header present no values", leaf("header.X-Plan", Exists),
			Request{Header: http.Header{"X-Plan": nil}}, true, false},
		{"metadata equals", leaf("metadata.plan", Equals, "pro"), full, true, false},
		{"metadata key case-sensitive", leaf("metadata.region", Exists), full, false, false},
		{"metadata empty exists", leaf("metadata.tier", Exists), full, true, false},
		{"metadata missing", leaf("metadata.nope", In, "a"), full, false, false},
		{"metadata nil", leaf("metadata.plan", Exists), Request{}, false, false},
		{"metadata error", leaf("metadata.plan", Exists), bad, false, true},
		{"metadata error under not", not(leaf("metadata.plan", Equals, "pro")), bad, false, true},
		{"header fine despite metadata error", leaf("header.x-plan", Equals, "pro"), bad, true, false},
		// Unknown spreads only as far as it matters.
		{"all: false beats error", all(leaf("metadata.plan", Exists), leaf("key", Equals, "bob")), bad, false, false},
		{"all: error otherwise", all(leaf("metadata.plan", Exists), leaf("key", Equals, "alice")), bad, false, true},
		{"any: true beats error", anyOf(leaf("metadata.plan", Exists), leaf("key", Equals, "alice")), bad, true, false},
		{"any: error otherwise", anyOf(leaf("metadata.plan", Exists), leaf("key", Equals, "bob")), bad, false, true},
		{"nested", all(
			anyOf(leaf("profile", Equals, "team-b"), leaf("header.X-TAG", Equals, "one")),
			not(anyOf(leaf("metadata.plan", Equals, "free"), not(leaf("key", Exists)))),
		), full, true, false},
		{"nested false", all(
			anyOf(leaf("profile", Equals, "team-b"), leaf("header.X-TAG", Equals, "one")),
			not(all(leaf("metadata.plan", Equals, "pro"), leaf("key", Exists))),
		), full, false, false},
		{"double not", not(not(leaf("metadata.plan", Equals, "pro"))), full, true, false},
		// Eval decides nothing it cannot read; malformed trees are errors, not panics.
		{"invalid empty", Cond{}, full, false, true},
		{"invalid empty all", Cond{All: []Cond{}}, full, false, true},
		{"invalid op", leaf("key", "glob", "a*"), full, false, true},
		{"invalid values", leaf("key", Equals), full, false, true},
		{"invalid mixed", Cond{Field: "key", Op: Exists, Not: &Cond{}}, full, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cond.Eval(tt.req)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Eval = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errBadMetadata) && !errors.Is(err, ErrCondInvalid) {
				t.Errorf("error %v wraps neither the metadata error nor ErrCondInvalid", err)
			}
		})
	}
}

func TestCondCheck(t *testing.T) {
	deep := leaf("key", Exists)
	for range maxCondDepth {
		deep = not(deep)
	}
	tests := []struct {
		name string
		cond Cond
		path string // "" for valid
		msg  string
	}{
		{"leaf", leaf("metadata.plan", Equals, "pro"), "", ""},
		{"metadata key with dots", leaf("metadata.a.b", Exists), "", ""},
		{"nested", all(not(leaf("key", In, "a", "b")), anyOf(leaf("header.X-A", Prefix, "x"))), "", ""},
		{"empty", Cond{}, "when", "empty condition"},
		{"no field", leaf("", Equals, "a"), "when.field", "required"},
		{"unknown field", leaf("user", Equals, "a"), "when.field", `unknown field "user"`},
		{"bare header", leaf("header.", Exists), "when.field", "names no header"},
		{"bad header name", leaf("header.X Plan", Exists), "when.field", "not a valid header name"},
		{"bare metadata", leaf("metadata.", Exists), "when.field", "names no key"},
		{"no op", Cond{Field: "key"}, "when.op", "required"},
		{"unknown op", leaf("key", "matches", "a"), "when.op", `unknown operator "matches"`},
		{"equals two", leaf("key", Equals, "a", "b"), "when.values", "exactly one value"},
		{"prefix none", leaf("key", Prefix), "when.values", "exactly one value"},
		{"in none", leaf("key", In), "when.values", "at least one value"},
		{"exists with value", leaf("key", Exists, "a"), "when.values", "no values"},
		{"two nodes", Cond{All: []Cond{leaf("key", Exists)}, Not: &Cond{}}, "when", "only one of"},
		{"leaf and node", Cond{Field: "key", Op: Exists, Any: []Cond{leaf("key", Exists)}}, "when", "not both"},
		{"empty all", Cond{All: []Cond{}}, "when.all", "empty list"},
		{"deep path", all(leaf("key", Exists), anyOf(not(leaf("metadata.x", In)))), "when.all[1].any[0].not.values", "at least one"},
		{"field path", all(leaf("key", Exists), leaf("nope", Exists)), "when.all[1].field", "unknown field"},
		{"too deep", deep, "when" + strings.Repeat(".not", maxCondDepth), "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cond.Check()
			if tt.path == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ce *CondError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CondError", err)
			}
			if ce.Path != tt.path || !strings.Contains(ce.Err.Error(), tt.msg) {
				t.Errorf("Check = %q, want path %q and %q", err, tt.path, tt.msg)
			}
		})
	}
}

// TestAllowed_WhenPlan is Mastra's ToolSearchProcessor example: the admin tools are for
// pro plans only, so a free plan and no plan at all are both denied.
func TestAllowed_WhenPlan(t *testing.T) {
	p := mustCompile(t, Rule{Name: "pro only", Phases: []Phase{Search, Load, Active}, Tools: []string{"admin.*"},
		When: &Cond{Not: &Cond{Field: "metadata.plan", Op: Equals, Values: []string{"pro"}}}})
	plan := func(v string) Request {
		return NewRequest("", nil, []byte(`{"plan":"`+v+`"}`), nil)
	}
	run(t, p, []check{
		{Load, plan("free"), "admin.reset", false},
		{Load, plan("pro"), "admin.reset", true},
		{Load, NewRequest("", nil, nil, nil), "admin.reset", false},
		{Load, NewRequest("", nil, []byte(`{"team":"x"}`), nil), "admin.reset", false},
		{Search, plan("Pro"), "admin.reset", false}, // case-sensitive
		{Active, plan("free"), "list_repos", true},  // not a tool the rule names
		// Metadata that cannot be read: the condition errors, and a rule that errors denies.
		{Load, NewRequest("", nil, []byte(`{"plan":1}`), nil), "admin.reset", false},
		{Load, NewRequest("", nil, []byte(`[]`), nil), "admin.reset", false},
	})
}

func TestAllowed_WhenWithOtherConditions(t *testing.T) {
	p := mustCompile(t,
		Rule{Phases: []Phase{Load}, Profiles: []string{"team-*"}, Tools: []string{"deploy"},
			When: &Cond{Any: []Cond{
				leaf("header.x-env", In, "prod", "production"),
				all(leaf("key", Prefix, "ci-"), not(leaf("header.X-Approved", Exists))),
			}}},
		// Metadata conditions and when together, with unreadable metadata: the rule still
		// needs its decidable conditions to hold.
		Rule{Phases: []Phase{Active}, Metadata: []Match{{Name: "plan"}}, When: &Cond{Field: "key", Op: Equals, Values: []string{"mallory"}}},
	)
	req := func(key, profile string, h http.Header) Request {
		r := NewRequest(profile, h, nil, nil)
		r.Key = key
		return r
	}
	badMD := func(key string) Request {
		r := NewRequest("", nil, []byte(`"x"`), nil)
		r.Key = key
		return r
	}
	run(t, p, []check{
		{Load, req("alice", "team-a", hdr("X-Env", "prod")), "deploy", false},
		{Load, req("alice", "team-a", hdr("X-Env", "staging")), "deploy", true},
		{Load, req("alice", "other", hdr("X-Env", "prod")), "deploy", true}, // profiles must match too
		{Load, req("ci-runner", "team-a", nil), "deploy", false},
		{Load, req("ci-runner", "team-a", hdr("x-approved", "")), "deploy", true},
		{Load, req("alice", "team-a", nil), "deploy", true},
		{Active, badMD("mallory"), "any", false},
		{Active, badMD("alice"), "any", true},
	})
}

func TestCompile_When(t *testing.T) {
	_, err := Compile([]Rule{
		{Phases: []Phase{Load}},
		{Phases: []Phase{Load}, When: &Cond{All: []Cond{leaf("key", Exists), leaf("plan", Equals, "pro")}}},
	})
	var re *RuleError
	if !errors.As(err, &re) || re.Index != 1 || re.Field != "when.all[1].field" {
		t.Fatalf("Compile = %v, want rules[1].when.all[1].field", err)
	}
	if want := `rules[1].when.all[1].field: unknown field "plan"`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Compile = %q, want it to start %q", err, want)
	}

	// The policy keeps its own copy: changing the rule afterwards changes nothing.
	when := &Cond{Not: &Cond{Field: "key", Op: In, Values: []string{"alice"}}}
	p := mustCompile(t, Rule{Phases: []Phase{Load}, When: when})
	when.Not.Values[0] = "bob"
	when.Not.Op = "broken"
	run(t, p, []check{
		{Load, Request{Key: "alice"}, "x", true},
		{Load, Request{Key: "bob"}, "x", false},
	})
}

// FuzzCondEval builds a condition tree and a request from the input, valid or not, and
// checks that Check and Eval never panic and agree with each other.
func FuzzCondEval(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 4})
	f.Add([]byte{6, 6, 6, 0, 4, 2, 1, 3, 9, 7, 5})
	f.Add([]byte{4, 3, 0, 2, 1, 5, 1, 0, 3, 2, 2, 1, 0, 0, 0, 2, 3, 1})
	f.Add([]byte(strings.Repeat("\x06", 80)))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 64 {
		b := make([]byte, 8+rng.IntN(120))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		r := in.request()
		c := in.cond(0)
		checkErr := c.Check()
		got, err := c.Eval(r)
		if err != nil && got {
			t.Fatalf("Eval = true with error %v", err)
		}
		if checkErr == nil && err != nil && r.MetadataErr == nil {
			t.Fatalf("valid %+v over readable metadata: Eval error %v", c, err)
		}
		if err != nil && !errors.Is(err, errBadMetadata) && !errors.Is(err, ErrCondInvalid) {
			t.Fatalf("Eval error %v wraps neither the metadata error nor ErrCondInvalid", err)
		}
		if checkErr == nil {
			n := Cond{Not: &c}
			ngot, nerr := n.Eval(r)
			// (When c is as deep as allowed, not of it is one too deep.)
			if n.Check() == nil && ((nerr == nil) != (err == nil) || (err == nil && ngot == got)) {
				t.Fatalf("not: Eval = %v, %v; inner %v, %v", ngot, nerr, got, err)
			}
			if _, err := Compile([]Rule{{Phases: []Phase{Load}, When: &c}}); err != nil {
				t.Fatalf("Compile of a checked condition: %v", err)
			}
		}
	})
}

type fuzzInput struct {
	data []byte
	i    int
}

func (in *fuzzInput) next() int {
	if in.i >= len(in.data) {
		return 0
	}
	in.i++
	return int(in.data[in.i-1])
}

func (in *fuzzInput) pick(opts []string) string { return opts[in.next()%len(opts)] }

var (
	fuzzFields = []string{"key", "profile", "header.X-Plan", "header.x-tag", "metadata.plan",
		"metadata.", "header.", "header.bad name", "plan", "", "metadata.tier"}
	fuzzOps    = []string{"equals", "in", "exists", "prefix", "", "glob"}
	fuzzValues = []string{"pro", "free", "", "p", "alice", "ali", "one", "PRO"}
)

func (in *fuzzInput) cond(depth int) Cond {
	switch k := in.next() % 8; {
	case k < 4 || depth > maxCondDepth+2:
		c := Cond{Field: in.pick(fuzzFields), Op: Op(in.pick(fuzzOps))}
		for range in.next() % 3 {
			c.Values = append(c.Values, in.pick(fuzzValues))
		}
		return c
	case k == 4 || k == 5:
		cs := make([]Cond, in.next()%4)
		for i := range cs {
			cs[i] = in.cond(depth + 1)
		}
		if k == 4 {
			return Cond{All: cs}
		}
		return Cond{Any: cs}
	case k == 6:
		sub := in.cond(depth + 1)
		return Cond{Not: &sub}
	default: // malformed: a leaf and a node at once
		sub := in.cond(depth + 1)
		return Cond{Field: in.pick(fuzzFields), Op: Exists, Not: &sub}
	}
}

func (in *fuzzInput) request() Request {
	r := Request{Key: in.pick(fuzzValues), Profile: in.pick(fuzzValues)}
	if n := in.next() % 4; n > 0 {
		r.Header = http.Header{}
		for range n {
			name := in.pick([]string{"X-Plan", "x-plan", "X-Tag", "x-tag"})
			if in.next()%5 == 0 {
				r.Header[name] = nil
			} else {
				r.Header[name] = append(r.Header[name], in.pick(fuzzValues))
			}
		}
	}
	switch in.next() % 4 {
	case 0:
		r.MetadataErr = errBadMetadata
	case 1:
	default:
		r.Metadata = map[string]string{"plan": in.pick(fuzzValues), "tier": in.pick(fuzzValues)}
	}
	return r
}
