package masking

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// These tests compile the structural tags this package builds with the real
// xgrammar (internal/xgrammartest: xgrammar's C++ core built to WASM, one
// node process for the whole test) and check whole model outputs against
// them. What must be accepted and refused comes from the test's own lists and
// from fmtCases' hand-written call bytes, never from the tag.

// xgTool is one tool of the test catalog: its schema, arguments that satisfy
// it, and arguments that break it.
type xgTool struct {
	name   string
	schema string // "" for none
	good   string
	bad    []string
}

// xgTools share prefixes (get, get_file, get_files; browser_open,
// browser_open_tab), hold unicode, and have nested schemas. Arguments list
// properties in the schema's order, as xgrammar's JSON schema grammar wants
// them.
var xgTools = []xgTool{
	{"get", "", `{"any": [1, {"deep": null}], "s": "é"}`, []string{`[]`, `"get"`}},
	{"get_file", `{ "type": "object", "required": ["path"], "properties": { "path": {"type": "string"} } }`,
		`{"path": "a/b.go"}`, []string{`{}`, `{"path": 7}`}},
	{"get_files", `{"type":"object","properties":{"glob":{"type":"string"},"limit":{"type":"integer"}}}`,
		`{"glob": "*.go", "limit": 3}`, []string{`{"limit": "three"}`, `{"glob": "*.go", "limit": 1.5}`}},
	{"git.commit", `{"type":"object","properties":{"message":{"type":"string"},"files":{"type":"array","items":{"type":"string"}},` +
		`"author":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}},"required":["name"]}},"required":["message","author"]}`,
		`{"message": "fix: x", "files": ["a.go", "b/c.go"], "author": {"name": "Ada", "email": "ada@example.com"}}`,
		[]string{`{"message": "fix", "author": {"email": "a@b"}}`, `{"message": "fix", "files": [1], "author": {"name": "A"}}`, `{"author": {"name": "A"}}`}},
	{"日本_検索", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, `{"q": "東京の天気"}`, []string{`{"q": null}`}},
	{"émoji😀", "", `{}`, []string{`"x"`}},
	{"browser_open", `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`, `{"url": "https://example.com"}`, []string{`{"url": ["x"]}`}},
	{"browser_open_tab", "", `{"n": 1}`, nil},
	{"browser_click", `{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"]}`, `{"x": 1, "y": 2}`, []string{`{"x": 1}`}},
	{"search_tools", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`, `{"query": "weather"}`, []string{`{"query": {"a": 1}}`}},
}

func xgParams() map[string]json.RawMessage {
	p := map[string]json.RawMessage{}
	for _, tl := range xgTools {
		if tl.schema != "" {
			p[tl.name] = json.RawMessage(tl.schema)
		}
	}
	return p
}

func xgTool1(t testing.TB, name string) xgTool {
	for _, tl := range xgTools {
		if tl.name == name {
			return tl
		}
	}
	t.Fatalf("no test tool %q", name)
	return xgTool{}
}

// xgSpecs are the specs checked in every format, with the names each allows
// written out rather than computed.
var xgSpecs = []struct {
	name    string
	spec    func(Format) Spec
	allowed []string
}{
	{"auto", func(f Format) Spec {
		return Spec{Format: f, Allowed: []string{"get_file", "git.commit", "日本_検索", "émoji😀", "browser_open", "get_file"}}
	}, []string{"get_file", "git.commit", "日本_検索", "émoji😀", "browser_open"}},
	{"required", func(f Format) Spec {
		return Spec{Format: f, Mode: ModeRequired, Allowed: []string{"get_files", "get", "browser_click"}}
	}, []string{"get_files", "get", "browser_click"}},
	{"specified", func(f Format) Spec {
		return Spec{Format: f, Mode: ModeSpecified, Namespace: "browser_", Allowed: []string{"search_tools", "browser_open", "browser_click", "get"}}
	}, []string{"browser_open", "browser_click"}},
	{"auto-one-call", func(f Format) Spec {
		return Spec{Format: f, OneCall: true, Allowed: []string{"get_file", "git.commit", "browser_open"}}
	}, []string{"get_file", "git.commit", "browser_open"}},
	{"required-one-call", func(f Format) Spec {
		return Spec{Format: f, Mode: ModeRequired, OneCall: true, Allowed: []string{"get_files", "get", "browser_click"}}
	}, []string{"get_files", "get", "browser_click"}},
	{"specified-one", func(f Format) Spec {
		return Spec{Format: f, Mode: ModeSpecified, Namespace: "get_file", Allowed: []string{"get", "get_file", "search_tools"}}
	}, []string{"get_file"}},
}

// endMarker is the text that closes one call, in each format that has one.
var endMarker = map[string]string{
	"hermes":   "</tool_call>",
	"llama3":   "}",
	"harmony":  "<|call|>",
	"deepseek": "<｜tool▁call▁end｜>",
}

// xgOutputs are the outputs a tag in format c and mode, allowing exactly
// allowed among xgTools, must accept and refuse.
func xgOutputs(t testing.TB, c fmtCase, spec Spec, allowed []string) []xgrammartest.Output {
	mode := spec.Mode
	var out []xgrammartest.Output
	add := func(accept bool, kind, text string) {
		out = append(out, xgrammartest.Output{Text: text, Accept: accept, Kind: kind})
	}
	auto := mode == ModeAuto
	const prose = "Let me check that.\n"
	a0 := xgTool1(t, allowed[0])
	for _, n := range allowed {
		tl := xgTool1(t, n)
		add(true, "allowed call", c.outputCalls(mode, fmtCall{n, tl.good}))
		for _, bad := range tl.bad {
			add(false, "arguments against the schema", c.outputCalls(mode, fmtCall{n, bad}))
		}
		// Free text before the trigger: a call may follow it in auto mode,
		// never in a required one.
		if auto {
			add(true, "text, then an allowed call", prose+c.outputCalls(mode, fmtCall{n, tl.good}))
		} else {
			add(false, "text before a required call", prose+c.outputCalls(mode, fmtCall{n, tl.good}))
		}
	}
	if len(allowed) > 1 {
		a1 := xgTool1(t, allowed[1])
		// A single-call format's output ends with its call; so does Hermes' and
		// Mistral's under OneCall (parallel_tool_calls: false).
		parts, _ := partsOf(c.f)
		add(!stopsAfterFirst(spec, parts), "parallel calls", c.outputCalls(mode, fmtCall{a0.name, a0.good}, fmtCall{a1.name, a1.good}))
	}
	for _, tl := range xgTools {
		if slices.Contains(allowed, tl.name) {
			continue
		}
		add(false, "disabled name", c.outputCalls(mode, fmtCall{tl.name, tl.good}))
		if auto {
			add(false, "disabled name", prose+c.outputCalls(mode, fmtCall{tl.name, tl.good}))
		}
		if c.multi {
			add(false, "disabled name", c.outputCalls(mode, fmtCall{a0.name, a0.good}, fmtCall{tl.name, tl.good}))
		}
	}
	if end, ok := endMarker[c.f.Name]; ok {
		lead := ""
		if !auto {
			lead = c.lead
		}
		call := c.call(a0.name, a0.good)
		if !strings.HasSuffix(call, end) {
			t.Fatalf("%s call %q does not end with %q", c.f.Name, call, end)
		}
		add(false, "call without its end marker", lead+strings.TrimSuffix(call, end))
	}
	if auto {
		add(true, "text without a call", `The answer is 42: a < b, [TOOL] and {"name" aside.`)
		add(true, "no output", "")
	} else {
		add(false, "text and no call in required mode", "The answer is 42.")
		add(false, "no output in required mode", "")
		if c.lead != "" {
			add(false, "required call without the format's lead", c.outputCalls(ModeAuto, fmtCall{a0.name, a0.good}))
		}
	}
	return out
}

// xgSlot says what a case of TestXGrammar_StructuralTags is, for its counts.
type xgSlot struct {
	format string
	kind   string // "spec", "walk" or "random"
}

// TestXGrammar_StructuralTags: in the real xgrammar, every structural tag
// this package builds — five formats; auto, required and specified modes —
// compiles, accepts every allowed call (prefix-sharing and unicode names,
// nested arguments that satisfy the schema, parallel calls where the format
// has them, free text before the call in auto mode) and refuses every
// disabled one (a name that is a prefix or an extension of an allowed one,
// arguments against the schema, a call without its end marker, text before
// a required call, a required call without the format's lead). A
// GrammarMatcher walked over a small vocabulary allows exactly the tokens
// that continue an allowed call, and random name sets over a shared-prefix
// alphabet hold the same. One node process for all of it; the vLLM and
// SGLang request bodies are checked in their backends.
func TestXGrammar_StructuralTags(t *testing.T) {
	params := xgParams()
	var cases []xgrammartest.Case
	var slots []xgSlot
	for _, c := range fmtCases {
		for _, s := range xgSpecs {
			spec := s.spec(c.f)
			tag, err := StructuralTag(spec, params)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.f.Name, s.name, err)
			}
			cases = append(cases, xgrammartest.Case{
				Name:    c.f.Name + "/" + s.name,
				Tag:     tag,
				Outputs: xgOutputs(t, c, spec, s.allowed),
			})
			slots = append(slots, xgSlot{c.f.Name, "spec"})
		}
	}
	walkFrom := len(cases)
	walks := xgWalkCases(t, params)
	for _, w := range walks {
		cases = append(cases, w.Case)
		slots = append(slots, xgSlot{w.format, "walk"})
	}
	for _, rc := range xgRandomCases(t) {
		cases = append(cases, rc.Case)
		slots = append(slots, xgSlot{rc.format, "random"})
	}

	rep := xgrammartest.Check(t, cases)
	t.Logf("xgrammar %s (npm @mlc-ai/web-xgrammar): %d tags", rep.Version, len(cases))

	for i, w := range walks {
		r := rep.Results[walkFrom+i]
		if r.Err != "" {
			continue // reported by Check
		}
		for j, got := range r.Walks {
			want := w.want[j]
			if got.RejectedAt != want.rejectedAt || want.rejectedAt < 0 && !cmp.Equal(got.Allowed, want.allowed) {
				t.Errorf("%s: after %q: matcher refused token %d (want %d); it allows %q, want %q",
					w.Name, w.texts[j], got.RejectedAt, want.rejectedAt, w.pieces(got.Allowed), w.pieces(want.allowed))
			}
		}
	}
	xgLogCounts(t, cases, slots, rep)
}

// xgLogCounts logs, per format, how many outputs of each kind xgrammar
// judged as expected, and the random name sets' allowed and disabled calls.
func xgLogCounts(t *testing.T, cases []xgrammartest.Case, slots []xgSlot, rep xgrammartest.Report) {
	for _, c := range fmtCases {
		type tally struct{ right, all int }
		byKind := map[string]*tally{}
		var kinds []string
		var rnd [2]tally // allowed, disabled
		walks := 0
		for i, cs := range cases {
			if slots[i].format != c.f.Name {
				continue
			}
			r := rep.Results[i]
			if slots[i].kind == "walk" {
				walks += len(cs.Walks)
				continue
			}
			for j, o := range cs.Outputs {
				var n *tally
				switch {
				case slots[i].kind == "random" && o.Accept:
					n = &rnd[0]
				case slots[i].kind == "random":
					n = &rnd[1]
				default:
					if byKind[o.Kind] == nil {
						byKind[o.Kind] = &tally{}
						kinds = append(kinds, o.Kind)
					}
					n = byKind[o.Kind]
				}
				n.all++
				if r.Err == "" && r.Accepted[j] == o.Accept {
					n.right++
				}
			}
		}
		var b strings.Builder
		for _, k := range kinds {
			fmt.Fprintf(&b, "\n  %-40s %3d/%-3d as expected", k, byKind[k].right, byKind[k].all)
		}
		fmt.Fprintf(&b, "\n  random name sets: allowed calls accepted %d/%d, disabled calls refused %d/%d; %d matcher walks",
			rnd[0].right, rnd[0].all, rnd[1].right, rnd[1].all, walks)
		t.Logf("%s:%s", c.f.Name, b.String())
	}
}

// xgWalk is a case with GrammarMatcher walks and, per walk, what the
// matcher must do.
type xgWalk struct {
	xgrammartest.Case
	format string
	texts  []string // each walk's text
	want   []xgWalkWant
}

type xgWalkWant struct {
	rejectedAt int
	allowed    []int
}

func (w xgWalk) pieces(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = w.Vocab[id]
	}
	return out
}

// xgWalkCases walks a GrammarMatcher into the name of a call, in every
// format in auto and required mode, over a vocabulary that has the format's
// markers and fixed text as whole tokens and every character on its own.
// After each walk the matcher must allow exactly the tokens t for which the
// call's text from its trigger on, then t, is still a prefix of an allowed
// call's text up to its arguments.
func xgWalkCases(t *testing.T, params map[string]json.RawMessage) []xgWalk {
	var out []xgWalk
	for _, c := range fmtCases {
		// pre and mid are the call's text before and after the name, from
		// the hand-written call bytes.
		pre, rest, _ := strings.Cut(c.call("\x01", "\x02"), "\x01")
		mid, _, _ := strings.Cut(rest, "\x02")
		for _, m := range []struct {
			mode    Mode
			allowed []string
			start   string // what the output holds before the call
		}{
			{ModeAuto, []string{"get_file", "git.commit", "日本_検索"}, "hello "},
			{ModeRequired, []string{"get_files", "get", "émoji😀"}, c.lead},
		} {
			spec := Spec{Format: c.f, Mode: m.mode, Allowed: m.allowed}
			tag, err := StructuralTag(spec, params)
			if err != nil {
				t.Fatal(err)
			}
			vocab := xgVocab(pre, mid, c.lead, m.start)
			w := xgWalk{Case: xgrammartest.Case{Name: c.f.Name + "/" + m.mode.String() + "/walks", Tag: tag, Vocab: vocab, Stop: []int{0}}, format: c.f.Name}
			var begins []string
			for _, n := range m.allowed {
				begins = append(begins, pre+n+mid)
			}
			for _, partial := range []string{"", "g", "ge", "get", "get_", "get_f", "get_file", "get_files", "git.", "日本", "émo", "x"} {
				for _, fine := range []bool{false, true} {
					start := xgTokenize(t, vocab, m.start, fine)
					call := xgTokenize(t, vocab, pre+partial, fine)
					// The first token that takes the call's text off
					// every allowed call is refused; with none, the
					// tokens that keep it on one are allowed.
					want := xgWalkWant{rejectedAt: -1}
					text := ""
					for i, id := range call {
						if text += vocab[id]; !xgAnyPrefix(begins, text) {
							want.rejectedAt = len(start) + i
							break
						}
					}
					if want.rejectedAt < 0 {
						for id, piece := range vocab {
							if xgAnyPrefix(begins, text+piece) {
								want.allowed = append(want.allowed, id)
							}
						}
					}
					w.Walks = append(w.Walks, append(start, call...))
					w.texts = append(w.texts, m.start+pre+partial)
					w.want = append(w.want, want)
				}
			}
			out = append(out, w)
		}
	}
	return out
}

func xgAnyPrefix(begins []string, s string) bool {
	for _, b := range begins {
		if strings.HasPrefix(b, s) {
			return true
		}
	}
	return false
}

// xgVocab is a walk vocabulary: the stop token first, the fixed texts whole,
// name pieces, and every character of all of them alone.
func xgVocab(fixed ...string) []string {
	vocab := []string{"</s>"}
	seen := map[string]bool{"": true, "</s>": true}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			vocab = append(vocab, s)
		}
	}
	pieces := append(fixed, "get", "_", "file", "files", "s", "git", ".", "commit", "日本", "検索", "émoji", "😀", "hello", " ", "{", "}", "\"", "x")
	for _, s := range append(pieces, fmtSpecials...) {
		add(s)
	}
	for _, s := range append(pieces, fmtSpecials...) {
		for _, r := range s {
			add(string(r))
		}
	}
	return vocab
}

// xgTokenize splits text into vocab ids: longest match first, or (fine) the
// format's special markers whole and every other character alone.
func xgTokenize(t testing.TB, vocab []string, text string, fine bool) []int {
	var out []int
	for text != "" {
		best := -1
		for id, piece := range vocab {
			if id == 0 || !strings.HasPrefix(text, piece) {
				continue
			}
			if fine && utf8.RuneCountInString(piece) > 1 && !slices.Contains(fmtSpecials, piece) {
				continue
			}
			if best < 0 || len(piece) > len(vocab[best]) {
				best = id
			}
		}
		if best < 0 {
			t.Fatalf("no token for %q", text)
		}
		out = append(out, best)
		text = text[len(vocab[best]):]
	}
	return out
}

// xgRandom is a random case and its format.
type xgRandom struct {
	xgrammartest.Case
	format string
}

// xgRandomCases are random name sets over a shared-prefix alphabet (every
// name is pieces of "a", "b", "ab", "_", "é", so most names are prefixes or
// extensions of others) with random allowed subsets, in every format and
// mode. Each allowed call alone must be accepted; each disabled one, alone
// or after an allowed call, refused.
func xgRandomCases(t *testing.T) []xgRandom {
	r := rand.New(rand.NewPCG(11, 27))
	alphabet := []string{"a", "b", "ab", "_", "é"}
	var out []xgRandom
	for i := range 30 * len(fmtCases) {
		c := fmtCases[i%len(fmtCases)]
		set := map[string]bool{}
		var names []string
		for len(names) < 6+r.IntN(8) {
			var b strings.Builder
			for range 1 + r.IntN(4) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			if n := b.String(); !set[n] {
				set[n] = true
				names = append(names, n)
			}
		}
		spec := Spec{Format: c.f, Mode: Mode(r.IntN(3))}
		for _, n := range names {
			if r.IntN(2) == 0 {
				spec.Allowed = append(spec.Allowed, n)
			}
		}
		if len(spec.Allowed) == 0 {
			spec.Allowed = names[:1]
		}
		var allowed []string
		if spec.Mode == ModeSpecified {
			pick := spec.Allowed[r.IntN(len(spec.Allowed))]
			spec.Namespace = string([]rune(pick)[:1])
			for _, n := range spec.Allowed {
				if strings.HasPrefix(n, spec.Namespace) {
					allowed = append(allowed, n)
				}
			}
		} else {
			allowed = spec.Allowed
		}
		tag, err := StructuralTag(spec, nil)
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		var outs []xgrammartest.Output
		for _, n := range names {
			ok := slices.Contains(allowed, n)
			kind := "disabled call"
			if ok {
				kind = "allowed call"
			}
			outs = append(outs, xgrammartest.Output{Text: c.outputCalls(spec.Mode, fmtCall{n, "{}"}), Accept: ok, Kind: kind})
			if !ok && c.multi {
				outs = append(outs, xgrammartest.Output{Text: c.outputCalls(spec.Mode, fmtCall{allowed[0], "{}"}, fmtCall{n, "{}"}), Kind: kind})
			}
		}
		out = append(out, xgRandom{xgrammartest.Case{Name: fmt.Sprintf("%s/random-%d %s allowed %q of %q", c.f.Name, i, spec.Mode, allowed, names), Tag: tag, Outputs: outs}, c.f.Name})
	}
	return out
}
