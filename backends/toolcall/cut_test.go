package toolcall

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// cutSample is a model's output in one format as atoms: a marker (one special token in
// the models that use the format) is one atom, other text one atom per character, so
// the output can be cut where a token limit can cut it. calls are its whole calls, name
// and arguments, in order.
type cutSample struct {
	format  string
	atoms   []string
	calls   [][2]string
	markers []string // text that must never come back as content
}

func atoms(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case marker:
			out = append(out, string(v))
		case string:
			for _, r := range v {
				out = append(out, string(r))
			}
		}
	}
	return out
}

type marker string

var cutSamples = []cutSample{
	{format: Hermes, atoms: atoms("Let me check. ", marker(hermesOpen), "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa ris\", \"n\": [1, 2]}}\n", marker(hermesClose),
		"\n", marker(hermesOpen), "\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"日本\"}}\n", marker(hermesClose)),
		calls:   [][2]string{{"get_weather", `{"city": "Pa ris", "n": [1, 2]}`}, {"send_email", `{"to": "日本"}`}},
		markers: []string{hermesOpen, hermesClose, `"name"`, `"arguments"`}},
	{format: Llama3, atoms: atoms(`{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}`),
		calls:   [][2]string{{"get_weather", `{"city": "Paris", "days": 3}`}},
		markers: []string{`"name"`, `"parameters"`}},
	{format: Llama3, atoms: atoms(marker(pythonTag), `{"name": "get_weather", "parameters": {"city": "Paris"}}`),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}},
		markers: []string{pythonTag, `"name"`, `"parameters"`}},
	{format: Mistral, atoms: atoms("Sure", marker(mistralCalls), "get_weather", marker(mistralArgs), `{"city": "Paris"}`, marker(mistralCalls), "send_email", marker(mistralArgs), `{"to": "x"}`),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}, {"send_email", `{"to": "x"}`}},
		markers: []string{mistralCalls, mistralArgs}},
	{format: Mistral, atoms: atoms(marker(mistralCalls), `[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "send_email", "arguments": {"to": "x"}}]`),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}, {"send_email", `{"to": "x"}`}},
		markers: []string{mistralCalls, `"name"`}},
	{format: Harmony, atoms: atoms(marker(harmonyChannel), "analysis", marker(harmonyMessage), "Need weather.", marker(harmonyEnd), marker(harmonyStart), "assistant",
		marker(harmonyChannel), "commentary to=functions.get_weather ", marker(harmonyConstrain), "json", marker(harmonyMessage), `{"city": "Paris"}`, marker(harmonyCall)),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}},
		markers: []string{harmonyChannel, harmonyMessage, harmonyStart, harmonyConstrain, harmonyCall, "to=functions"}},
	{format: DeepSeek, atoms: atoms("ok ", marker(deepseekCallsBegin), marker(deepseekCallBegin), "get_weather", marker(deepseekSep), `{"city": "Paris"}`, marker(deepseekCallEnd),
		marker(deepseekCallBegin), "send_email", marker(deepseekSep), `{"to": "x"}`, marker(deepseekCallEnd), marker(deepseekCallsEnd)),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}, {"send_email", `{"to": "x"}`}},
		markers: []string{deepseekCallsBegin, deepseekCallBegin, deepseekSep, deepseekCallEnd}},
	{format: DeepSeek, atoms: atoms(marker(deepseekCallsBegin), marker(deepseekCallBegin), "function", marker(deepseekSep), "get_weather\n```json\n{\"city\": \"Paris\"}\n```", marker(deepseekCallEnd), marker(deepseekCallsEnd)),
		calls:   [][2]string{{"get_weather", `{"city": "Paris"}`}},
		markers: []string{deepseekCallsBegin, deepseekCallBegin, deepseekSep, "```"}},
}

// TestFinishCut_ACallCutShortIsStillACall: cut after every atom, whole (Parse with Cut)
// and streamed in two pieces (FinishCut), each sample gives its calls that were whole,
// then the cut one once its name is whole, with arguments that are the beginning of the
// whole call's, and content that is the beginning of its content without any marker or
// call text: the template's syntax never reaches a client.
func TestFinishCut_ACallCutShortIsStillACall(t *testing.T) {
	for _, s := range cutSamples {
		full, err := Parse(s.format, strings.Join(s.atoms, ""), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wantNames []string
		for _, c := range s.calls {
			wantNames = append(wantNames, c[0])
		}
		var gotNames []string
		for _, c := range full.ToolCalls {
			gotNames = append(gotNames, c.Function.Name)
		}
		if !cmp.Equal(gotNames, wantNames) {
			t.Fatalf("%s: the uncut sample parses to %v, want %v", s.format, gotNames, wantNames)
		}
		partial := 0
		for k := 0; k <= len(s.atoms); k++ {
			text := strings.Join(s.atoms[:k], "")
			m, err := Parse(s.format, text, Options{Cut: true})
			if err != nil {
				t.Fatal(err)
			}
			for split := 0; split <= len(text); split += max(1, len(text)/7) {
				if !utf8.ValidString(text[:split]) {
					continue
				}
				p, _ := NewParser(s.format, Options{})
				evs := append(p.Feed(text[:split]), p.Feed(text[split:])...)
				evs = append(evs, p.FinishCut()...)
				if diff := cmp.Diff(flatten(evs), flattenMessage(m)); diff != "" {
					t.Fatalf("%s cut at %q: streamed split at %d differs from whole (-stream +whole):\n%s", s.format, text, split, diff)
				}
			}
			for _, mk := range s.markers {
				if strings.Contains(m.Content, mk) {
					t.Errorf("%s cut at %q: content %q holds %q", s.format, text, m.Content, mk)
				}
			}
			if !strings.HasPrefix(full.Content, m.Content) && !strings.HasPrefix(full.Content, strings.TrimRight(m.Content, " \n")) {
				t.Errorf("%s cut at %q: content %q is not the beginning of %q", s.format, text, m.Content, full.Content)
			}
			if len(m.ToolCalls) > len(s.calls) {
				t.Fatalf("%s cut at %q: %d calls", s.format, text, len(m.ToolCalls))
			}
			for i, c := range m.ToolCalls {
				want := s.calls[i]
				if c.Function.Name != want[0] {
					t.Errorf("%s cut at %q: call %d is %q, want %q", s.format, text, i, c.Function.Name, want[0])
				}
				if !strings.HasPrefix(want[1], c.Function.Arguments) {
					t.Errorf("%s cut at %q: call %d arguments %q are not the beginning of %q", s.format, text, i, c.Function.Arguments, want[1])
				}
				if i == len(m.ToolCalls)-1 && c.Function.Arguments != want[1] {
					partial++
				}
			}
		}
		if partial == 0 {
			t.Errorf("%s: no cut produced a call with partial arguments: the test proves nothing", s.format)
		}
	}
}

func flattenMessage(m *Message) flat {
	f := flat{Text: m.Content, Reasoning: m.Reasoning}
	for _, c := range m.ToolCalls {
		f.Calls = append(f.Calls, c.Function.Name+" "+c.Function.Arguments)
	}
	return f
}

// FuzzFinishCut: FinishCut never panics, never returns a call without a name, and a
// stream split anywhere gives what the whole text does.
func FuzzFinishCut(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(uint8(i), s, uint8(len(s)/2))
	}
	for i, s := range cutSamples {
		txt := strings.Join(s.atoms, "")
		f.Add(uint8(i), txt[:len(txt)*2/3], uint8(9))
	}
	f.Fuzz(func(t *testing.T, which uint8, text string, at uint8) {
		format := Names()[int(which)%len(Names())]
		m, err := Parse(format, text, Options{Cut: true})
		if err != nil {
			t.Fatal(err)
		}
		split := int(at) % (len(text) + 1)
		p, _ := NewParser(format, Options{})
		evs := append(p.Feed(text[:split]), p.Feed(text[split:])...)
		evs = append(evs, p.FinishCut()...)
		if diff := cmp.Diff(flatten(evs), flattenMessage(m)); diff != "" {
			t.Fatalf("%s: split at %d differs from whole:\n%s", format, split, diff)
		}
		for _, c := range m.ToolCalls {
			if c.Function.Name == "" {
				t.Fatalf("%s: a call without a name from %q", format, text)
			}
		}
		if len(m.Content)+len(m.Reasoning) > len(text) {
			t.Fatalf("%s: more text out than in", format)
		}
	})
}
