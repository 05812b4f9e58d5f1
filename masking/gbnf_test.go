package masking

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"github.com/maskgate/maskgate/internal/gbnftest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// hermesCall is one Hermes call as a model emits it.
func hermesCall(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

// goldenSpecs are the cases kept as golden request fields for every renderer.
var goldenSpecs = []struct {
	name string
	spec Spec
}{
	{"auto", Spec{Format: Hermes(), Allowed: []string{"search_tools", "load_tool", "get_file", "get_files", "git.commit"}}},
	{"required", Spec{Format: Hermes(), Mode: ModeRequired, Allowed: []string{"search_tools", "load_tool", "get_file"}}},
	{"specified", Spec{Format: Hermes(), Mode: ModeSpecified, Namespace: "browser_", Allowed: []string{"search_tools", "browser_open", "browser_click", "browser_open"}}},
	{"unicode", Spec{Format: Hermes(), Allowed: []string{"日本_検索", "émoji😀", "ß<tag>&"}}},
}

// goldenParams are tool schemas, deliberately not compact and with keys out
// of order, to show the bytes follow the input.
var goldenParams = map[string]json.RawMessage{
	"get_file":     json.RawMessage(`{ "type": "object", "required": ["path"], "properties": { "path": {"type": "string"} } }`),
	"search_tools": json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"<b>what</b> & why"}}}`),
	"load_tool":    json.RawMessage(`null`),
}

// encodeFields is how a backend would write the grammar fields: JSON without
// HTML escaping, so markers stay readable.
func encodeFields(t *testing.T, g Grammar) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGBNF_Golden(t *testing.T) {
	for _, tc := range goldenSpecs {
		t.Run(tc.name, func(t *testing.T) {
			g, err := GBNF(tc.spec, goldenParams)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "gbnf/"+tc.name+".gbnf", []byte(g.Grammar))
			golden(t, "gbnf/"+tc.name+".json", encodeFields(t, g))
		})
	}
}

func TestGBNF_LazyOnlyInAuto(t *testing.T) {
	for _, tc := range goldenSpecs {
		g, err := GBNF(tc.spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantLazy := tc.spec.Mode == ModeAuto
		if g.Lazy != wantLazy {
			t.Errorf("%s: Lazy = %v, want %v", tc.name, g.Lazy, wantLazy)
		}
		if wantLazy && !cmp.Equal(g.Triggers, []GrammarTrigger{{TriggerWord, "<tool_call>"}}) {
			t.Errorf("%s: Triggers = %v", tc.name, g.Triggers)
		}
		if !wantLazy && g.Triggers != nil {
			t.Errorf("%s: non-lazy grammar has triggers %v", tc.name, g.Triggers)
		}
		if !cmp.Equal(g.PreservedTokens, []string{"<tool_call>", "</tool_call>"}) {
			t.Errorf("%s: PreservedTokens = %v", tc.name, g.PreservedTokens)
		}
		if !strings.HasPrefix(g.Grammar, "root ::= ") {
			t.Errorf("%s: grammar does not start with root", tc.name)
		}
	}
}

// TestGBNF_TriggerTypeNumbers pins the wire numbers of llama.cpp's
// common_grammar_trigger_type.
func TestGBNF_TriggerTypeNumbers(t *testing.T) {
	b, err := json.Marshal(GrammarTrigger{TriggerWord, "<tool_call>"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"type":1,"value":"\u003ctool_call\u003e"}` {
		t.Errorf("got %s", got)
	}
	if TriggerToken != 0 || TriggerPattern != 2 || TriggerPatternFull != 3 {
		t.Error("trigger type numbers moved")
	}
}

func TestGBNF_DeterministicAndOrdered(t *testing.T) {
	spec := Spec{Format: Hermes(), Allowed: []string{"zeta", "alpha", "zeta", "mid"}}
	a, err := GBNF(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, err := GBNF(spec, goldenParams)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(a, b) {
			t.Fatal("GBNF output changed between calls")
		}
	}
	if got, want := gbnfNames(t, a.Grammar), []string{"alpha", "mid", "zeta"}; !cmp.Equal(got, want) {
		t.Errorf("names %q, want %q (deduplicated)", got, want)
	}
}

func TestGBNF_Errors(t *testing.T) {
	llama3 := Format{Name: "llama3", Trigger: "{", NameOpen: "\"name\": \"", NameClose: "\", ", End: "}"}
	tests := []struct {
		name string
		spec Spec
		is   error
		msg  string
	}{
		{"auto with nothing allowed", Spec{Format: Hermes()}, ErrNoCallAllowed, ""},
		{"required with nothing allowed", Spec{Format: Hermes(), Mode: ModeRequired}, nil, "no allowed name"},
		{"format without whole-call rendering", Spec{Format: llama3, Allowed: []string{"a"}}, nil, "hermes only"},
		{"name needing escapes", Spec{Format: Hermes(), Allowed: []string{`a"b`}}, nil, "needs escaping"},
		{"specified without namespace", Spec{Format: Hermes(), Mode: ModeSpecified, Allowed: []string{"a"}}, nil, "Namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := GBNF(tt.spec, nil)
			_, err2 := StructuralTag(tt.spec, nil)
			for _, e := range []error{err, err2} {
				switch {
				case e == nil:
					t.Fatal("no error")
				case tt.is != nil && !errors.Is(e, tt.is):
					t.Errorf("error %v, want %v", e, tt.is)
				case tt.msg != "" && !strings.Contains(e.Error(), tt.msg):
					t.Errorf("error %q does not say %q", e, tt.msg)
				}
			}
		})
	}
}

// parseGBNFLiteral reads one GBNF string literal at the start of s the way
// llama.cpp's parse_char does and returns its code points as UTF-8 and the
// rest of s.
func parseGBNFLiteral(t testing.TB, s string) (string, string) {
	t.Helper()
	if !strings.HasPrefix(s, `"`) {
		t.Fatalf("literal expected at %q", s)
	}
	s = s[1:]
	var out strings.Builder
	for {
		if s == "" {
			t.Fatal("unterminated literal")
		}
		switch c := s[0]; {
		case c == '"':
			return out.String(), s[1:]
		case c == '\\':
			if len(s) < 2 {
				t.Fatal("dangling escape")
			}
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[1]]
			if n > 0 {
				v, err := strconv.ParseUint(s[2:2+n], 16, 32)
				if err != nil {
					t.Fatal(err)
				}
				out.WriteRune(rune(v))
				s = s[2+n:]
				continue
			}
			r, ok := map[byte]byte{'t': '\t', 'r': '\r', 'n': '\n', '\\': '\\', '"': '"', '[': '[', ']': ']'}[s[1]]
			if !ok {
				t.Fatalf("unknown escape at %q", s)
			}
			out.WriteByte(r)
			s = s[2:]
		default:
			r, n := utf8.DecodeRuneInString(s)
			if c < 0x20 {
				t.Fatalf("raw control byte %#x in literal", c)
			}
			out.WriteRune(r)
			s = s[n:]
		}
	}
}

// gbnfNames reads the names of the tool rule back, sorted (gbnftest.ToolNames: the tool
// rule and the name tree under it), failing the test on any other shape.
func gbnfNames(t testing.TB, g string) []string {
	t.Helper()
	names, err := gbnftest.ToolNames(g)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestGBNFLiteral_RoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "nl\n\r\t", "\x00\x1f\x7f", "[br]", "日本😀", "<tool_call>\n{\"name\": \""} {
		var b strings.Builder
		writeGBNFLiteral(&b, s)
		got, rest := parseGBNFLiteral(t, b.String())
		if got != s || rest != "" {
			t.Errorf("%q → %s → %q (rest %q)", s, b.String(), got, rest)
		}
	}
}

func FuzzGBNFLiteral(f *testing.F) {
	for _, s := range []string{"a", `"\`, "\n", "é", "\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("literals are read as code points; names are valid UTF-8")
		}
		var b strings.Builder
		writeGBNFLiteral(&b, s)
		got, rest := parseGBNFLiteral(t, b.String())
		if got != s || rest != "" {
			t.Errorf("%q → %s → %q", s, b.String(), got)
		}
	})
}

// TestGBNF_NamesAreExactlyTheAllowedSet checks, without an engine, that the
// name rule lists exactly the allowed names on random catalogs; the
// llamacpp-tagged tests check the whole grammar in llama.cpp.
func TestGBNF_NamesAreExactlyTheAllowedSet(t *testing.T) {
	forRandomSpecs(t, 200, func(t *testing.T, spec Spec, allowed, _ []string) {
		g, err := GBNF(spec, nil)
		if err != nil {
			if errors.Is(err, ErrNoCallAllowed) && len(allowed) == 0 {
				return
			}
			t.Fatal(err)
		}
		if got := gbnfNames(t, g.Grammar); !cmp.Equal(got, sorted(allowed)) {
			t.Fatalf("names %q, want %q", got, sorted(allowed))
		}
	})
}

// sorted is a sorted copy of names.
func sorted(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return out
}
