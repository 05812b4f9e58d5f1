package masking

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fmtCase is one built-in format with its call bytes written out by hand
// from the chat templates and docs cited on its constructor, not derived
// from the package's own tables, so a wrong table fails here.
type fmtCase struct {
	f Format
	// call is one whole call, from the trigger on.
	call func(name, args string) string
	// lead and tail surround the calls of a grammar that is not lazy
	// (lead) or of every grammar (tail).
	lead, tail string
	multi      bool
}

var fmtCases = []fmtCase{
	{f: Hermes(), call: hermesCall, multi: true},
	{f: Llama3(), call: func(n, a string) string { return `{"name": "` + n + `", "parameters": ` + a + `}` }},
	{f: Mistral(), call: func(n, a string) string { return "[TOOL_CALLS]" + n + "[ARGS]" + a }, multi: true},
	{f: Harmony(), call: func(n, a string) string {
		return "to=functions." + n + " <|constrain|>json<|message|>" + a + "<|call|>"
	},
		lead: "<|channel|>commentary "},
	{f: DeepSeek(), call: func(n, a string) string {
		return "<｜tool▁call▁begin｜>" + n + "<｜tool▁sep｜>" + a + "<｜tool▁call▁end｜>"
	},
		lead: "<｜tool▁calls▁begin｜>", tail: "<｜tool▁calls▁end｜>", multi: true},
}

// output is what a grammar of spec must accept for calls to names: lead
// (unless lazy), the calls, the tail.
func (c fmtCase) output(mode Mode, args string, names ...string) string {
	calls := make([]fmtCall, len(names))
	for i, n := range names {
		calls[i] = fmtCall{n, args}
	}
	return c.outputCalls(mode, calls...)
}

// fmtCall is one call's name and arguments.
type fmtCall struct{ name, args string }

// outputCalls is output with each call's own arguments.
func (c fmtCase) outputCalls(mode Mode, calls ...fmtCall) string {
	var b strings.Builder
	if mode != ModeAuto {
		b.WriteString(c.lead)
	}
	for i, k := range calls {
		if i > 0 && c.f == Hermes() {
			b.WriteString("\n")
		}
		b.WriteString(c.call(k.name, k.args))
	}
	b.WriteString(c.tail)
	return b.String()
}

func TestFormatByName_EveryNameRoundTrips(t *testing.T) {
	want := []string{"hermes", "llama3", "mistral", "harmony", "deepseek"}
	if got := FormatNames(); !cmp.Equal(got, want) {
		t.Fatalf("FormatNames = %q, want %q", got, want)
	}
	for i, n := range want {
		f, ok := FormatByName(n)
		if !ok || f.Name != n || f != fmtCases[i].f {
			t.Errorf("FormatByName(%q) = %+v, %v", n, f, ok)
		}
		if err := f.validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	for _, n := range []string{"", "Hermes", "qwen", "llama"} {
		if _, ok := FormatByName(n); ok {
			t.Errorf("FormatByName(%q) found a format", n)
		}
	}
}

// The excerpts are short paraphrases of each family's tool-call rendering,
// enough to carry the markers DetectFormat reads.
func TestDetectFormat_RecognisesEachFamily(t *testing.T) {
	tests := []struct {
		name, tmpl, want string // want "" means not recognised
	}{
		{"qwen3", `{%- if tools %}<tools>{{ tool | tojson }}</tools>{%- endif %}{{- '<tool_call>\n{"name": "' }}{{ tc.name }}{{- '", "arguments": ' }}{{ tc.arguments | tojson }}{{- '}\n</tool_call>' }}`, "hermes"},
		{"llama 3.1", `{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{{- '{"name": "' + tool_call.name + '", ' }}{{- '"parameters": ' }}{{- tool_call.arguments | tojson }}{{- "}" }}{{- "<|eot_id|>" }}`, "llama3"},
		{"mistral small 3.2", `{%- for tool in message['tool_calls'] %}{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + arguments }}{%- endfor %}{{- eos_token }}`, "mistral"},
		{"mistral v7 json list", `{{- '[TOOL_CALLS][' }}{%- for tc in message.tool_calls %}{{- tc.function | tojson }}{%- endfor %}{{- ']' + eos_token }}`, ""},
		{"gpt-oss", `{{- "<|start|>assistant to=" }}{{- "functions." + tool_call.name + "<|channel|>commentary " }}{{- "json<|message|>" }}{{- tool_call.arguments|tojson }}{{- "<|call|>" }}`, "harmony"},
		{"deepseek v3.1", `{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>' + tool['function']['arguments'] + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}`, "deepseek"},
		{"deepseek r1 fenced", "{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + '<｜tool▁call▁end｜>'}}", ""},
		{"plain chatml", `{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}`, ""},
		{"llama 3 without tools", `<|start_header_id|>{{ role }}<|end_header_id|>\n\n{{ content }}<|eot_id|>`, ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := DetectFormat(tt.tmpl)
			if ok != (tt.want != "") || f.Name != tt.want {
				t.Fatalf("DetectFormat = %q, %v; want %q", f.Name, ok, tt.want)
			}
			if ok {
				if g, _ := FormatByName(tt.want); g != f {
					t.Errorf("detected format differs from FormatByName(%q)", tt.want)
				}
			}
		})
	}
}

// TestFormats_RenderingsSpellTheCall: a structural tag's begin + arguments +
// end and a grammar's accepted text are the call bytes of fmtCases.
func TestFormats_RenderingsSpellTheCall(t *testing.T) {
	for _, c := range fmtCases {
		t.Run(c.f.Name, func(t *testing.T) {
			forRandomSpecsIn(t, c.f, 60, func(t *testing.T, spec Spec, allowed, _ []string) {
				raw, err := StructuralTag(spec, goldenParams)
				if len(allowed) == 0 {
					if !errors.Is(err, ErrNoCallAllowed) {
						t.Fatalf("err = %v, want ErrNoCallAllowed", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var st structTag
				if err := json.Unmarshal(raw, &st); err != nil {
					t.Fatalf("%v\n%s", err, raw)
				}
				lead, tt := st.calls(t)
				if want := c.lead; spec.Mode == ModeAuto && lead != "" || spec.Mode != ModeAuto && lead != want {
					t.Errorf("mode %s: lead %q, want %q", spec.Mode, lead, want)
				}
				if !cmp.Equal(tt.Triggers, []string{c.f.Trigger}) {
					t.Errorf("triggers %q", tt.Triggers)
				}
				if tt.AtLeastOne == nil || *tt.AtLeastOne != (spec.Mode != ModeAuto) {
					t.Errorf("mode %s: at_least_one %v", spec.Mode, tt.AtLeastOne)
				}
				if stop := tt.StopAfterFirst != nil && *tt.StopAfterFirst; stop == c.multi {
					t.Errorf("stop_after_first %v with parallel calls %v", stop, c.multi)
				}
				if len(tt.Tags) != len(allowed) {
					t.Fatalf("%d tags for %d names", len(tt.Tags), len(allowed))
				}
				for i, tag := range tt.Tags {
					if got, want := tag.Begin+"{}"+tag.End, c.call(allowed[i], "{}"); got != want {
						t.Errorf("tag spells %q, want %q", got, want)
					}
					if !strings.HasPrefix(tag.Begin, c.f.Trigger) {
						t.Errorf("begin %q does not start with the trigger", tag.Begin)
					}
				}
				g, err := GBNF(spec, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := gbnfNames(t, g.Grammar); !cmp.Equal(got, sorted(allowed)) {
					t.Errorf("grammar names %q, want %q", got, sorted(allowed))
				}
				if g.Lazy != (spec.Mode == ModeAuto) || g.Lazy && !cmp.Equal(g.Triggers, []GrammarTrigger{{TriggerWord, c.f.Trigger}}) {
					t.Errorf("lazy %v triggers %v", g.Lazy, g.Triggers)
				}
				// The format's special markers are preserved, so a one-token
				// trigger is accepted by llama-server.
				for _, p := range g.PreservedTokens {
					if !strings.Contains(c.output(ModeRequired, "{}", "x"), p) {
						t.Errorf("preserved token %q is not in the format", p)
					}
				}
			})
		})
	}
}

// TestFormats_Golden keeps every format's renderings of the golden specs.
func TestFormats_Golden(t *testing.T) {
	for _, c := range fmtCases[1:] { // Hermes has its own golden files
		for _, tc := range goldenSpecs {
			t.Run(c.f.Name+"/"+tc.name, func(t *testing.T) {
				spec := tc.spec
				spec.Format = c.f
				// A name holding the format's closer is refused; keep the case's shape.
				spec.Allowed = slices.Clone(spec.Allowed)
				for i, n := range spec.Allowed {
					spec.Allowed[i] = strings.ReplaceAll(n, c.f.NameClose[:1], "_")
				}
				tag, err := StructuralTag(spec, goldenParams)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(tag) {
					t.Fatalf("not JSON: %s", tag)
				}
				golden(t, "structtag/"+c.f.Name+"-"+tc.name+".json", append(tag, '\n'))
				g, err := GBNF(spec, goldenParams)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, "gbnf/"+c.f.Name+"-"+tc.name+".gbnf", []byte(g.Grammar))
				golden(t, "gbnf/"+c.f.Name+"-"+tc.name+".json", encodeFields(t, g))
			})
		}
	}
}

// TestCatalog_SameBytesAsPerCallRendering: a catalog built once renders
// every subset to the same bytes as GBNF and StructuralTag with params,
// including names it lacks, and reports the same errors.
func TestCatalog_SameBytesAsPerCallRendering(t *testing.T) {
	params := map[string]json.RawMessage{}
	for k, v := range goldenParams {
		params[k] = v
	}
	for _, c := range fmtCases {
		forRandomSpecsIn(t, c.f, 80, func(t *testing.T, spec Spec, allowed, disabled []string) {
			// Half the allowed names are in the catalog with a schema.
			p := map[string]json.RawMessage{}
			for k, v := range params {
				p[k] = v
			}
			for i, n := range append(append([]string{}, allowed...), disabled...) {
				if i%2 == 0 {
					p[n] = json.RawMessage(`{ "type": "object", "properties": {"q": {"type": "string"}} }`)
				}
			}
			cat := NewCatalog(p)
			g1, err1 := GBNF(spec, p)
			g2, err2 := cat.GBNF(spec)
			if !cmp.Equal(g1, g2) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("GBNF differs: %v / %v", err1, err2)
			}
			t1, err1 := StructuralTag(spec, p)
			t2, err2 := cat.StructuralTag(spec)
			if string(t1) != string(t2) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("structural tag differs: %v / %v\n%s\n%s", err1, err2, t1, t2)
			}
		})
	}
	cat := NewCatalog(map[string]json.RawMessage{"bad": json.RawMessage(`{"type":`), "a b": nil, "ok": nil})
	if _, err := cat.StructuralTag(Spec{Format: Hermes(), Allowed: []string{"ok", "bad"}}); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("invalid schema: %v", err)
	}
	if _, err := cat.StructuralTag(Spec{Format: Hermes(), Allowed: []string{"ok"}}); err != nil {
		t.Errorf("a bad schema of a tool not rendered fails the render: %v", err)
	}
	// "a b" is a fine Hermes name but holds harmony's closer.
	if _, err := cat.GBNF(Spec{Format: Hermes(), Allowed: []string{"a b"}}); err != nil {
		t.Errorf("hermes: %v", err)
	}
	if _, err := cat.GBNF(Spec{Format: Harmony(), Allowed: []string{"a b"}}); err == nil {
		t.Error("harmony name with a space rendered")
	}
}

func TestCache_HitInAnyOrderAndExact(t *testing.T) {
	l := loadLlama(t)
	c := &Cache{Max: 2}
	names := []string{"b", "a", "c"}
	m1, err := c.Get(l.ix, Spec{Format: Hermes(), Allowed: names})
	if err != nil {
		t.Fatal(err)
	}
	names[0] = "zzz" // the cache must have copied the caller's slice
	m2, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: []string{"b", "a", "c"}})
	m3, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: []string{"c", "a", "b", "a"}})
	if m1 != m2 || m1 != m3 {
		t.Fatal("the same set missed")
	}
	m4, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: names})
	got := m4.Names()
	slices.Sort(got)
	if m4 == m1 || !cmp.Equal(got, []string{"a", "c", "zzz"}) {
		t.Fatalf("another set hit: %q", got)
	}
	for _, f := range []Format{Llama3(), Mistral()} {
		if mf, _ := c.Get(l.ix, Spec{Format: f, Allowed: []string{"b", "a", "c"}}); mf == m1 {
			t.Fatalf("format %s not in the key", f.Name)
		}
	}
	if c.Len() != 2 || len(c.aliases) > 2*maxAliases {
		t.Fatalf("Len %d, %d alias buckets after eviction", c.Len(), len(c.aliases))
	}
	if m5, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: []string{"b", "a", "c"}}); m5 == m1 {
		t.Fatal("an evicted mask came back through a stale alias")
	}
}
