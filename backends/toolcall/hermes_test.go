package toolcall

import "testing"

func TestHermes_Calls(t *testing.T) {
	checkCases(t, Hermes, []parseCase{
		{"plain text", "Hello there.", flat{Text: "Hello there."}},
		{"plain text keeps its trailing newline", "Hello\n", flat{Text: "Hello\n"}},
		{"one call keeps the model's argument bytes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			flat{Calls: []string{`get_weather {"city": "Paris"}`}}},
		{"text then call, whitespace between dropped", "Let me check.\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n",
			flat{Text: "Let me check.", Calls: []string{"a {}"}}},
		{"multiple calls", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"y\": [1, 2]}}\n</tool_call>",
			flat{Calls: []string{`a {"x": 1}`, `b {"y": [1, 2]}`}}},
		{"text after a call stays", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\nDone.",
			flat{Text: "\nDone.", Calls: []string{"a {}"}}},
		{"arguments as a string are decoded", `<tool_call>{"name":"a","arguments":"{\"x\":1}"}</tool_call>`, flat{Calls: []string{`a {"x":1}`}}},
		{"missing arguments", `<tool_call>{"name":"a"}</tool_call>`, flat{Calls: []string{"a {}"}}},
		{"null arguments", `<tool_call>{"name":"a","arguments":null}</tool_call>`, flat{Calls: []string{"a {}"}}},
		{"parameters read when arguments are missing", `<tool_call>{"name":"a","parameters":{"q":1}}</tool_call>`, flat{Calls: []string{`a {"q":1}`}}},
		{"unclosed call at the end still parses", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n", flat{Calls: []string{"a {}"}}},
		{"malformed JSON is text", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\n</tool_call>",
			flat{Text: "<tool_call>\n{\"name\": \"a\", \"arguments\": {\n</tool_call>"}},
		{"no name is text", `<tool_call>{"arguments":{}}</tool_call>`, flat{Text: `<tool_call>{"arguments":{}}</tool_call>`}},
		{"name not a string is text", `<tool_call>{"name":3}</tool_call>`, flat{Text: `<tool_call>{"name":3}</tool_call>`}},
		{"name matches exactly", `<tool_call>{"NAME":"a"}</tool_call>`, flat{Text: `<tool_call>{"NAME":"a"}</tool_call>`}},
		{"unclosed garbage is text", "ok <tool_call> {oops", flat{Text: "ok <tool_call> {oops"}},
		{"malformed then good", "<tool_call>nope</tool_call><tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
			flat{Text: "<tool_call>nope</tool_call>", Calls: []string{"b {}"}}},
		{"a tag inside a broken call starts a new call", "<tool_call><tool_call>{\"name\":\"c\"}</tool_call>",
			flat{Text: "<tool_call>", Calls: []string{"c {}"}}},
		{"a lone < is text", "a < b", flat{Text: "a < b"}},
		{"a tag prefix at the end is text", "see <tool_", flat{Text: "see <tool_"}},
		{"closing tag alone is text", "</tool_call>", flat{Text: "</tool_call>"}},
		{"whitespace only stays", " \n", flat{Text: " \n"}},
	})
}

// TestParser_HoldsPossibleMarkerUntilResolved: a piece that may start <tool_call> is not
// sent as content before the next piece says what it is, and the rest is sent at once.
func TestParser_HoldsPossibleMarkerUntilResolved(t *testing.T) {
	p, _ := NewParser(Hermes, Options{ResponseID: "chatcmpl-x"})
	if got := flatten(p.Feed("Sure <tool")); got.Text != "Sure" {
		t.Fatalf("first piece emitted %q, want %q", got.Text, "Sure")
	}
	if got := p.Feed("_call>{\"name\":\"a\""); len(got) != 0 {
		t.Fatalf("an open call emitted %v", got)
	}
	evs := p.Feed(",\"arguments\":{}}</tool_call>")
	if len(evs) != 1 || evs[0].Call == nil {
		t.Fatalf("closing the call gave %+v", evs)
	}
	c := evs[0].Call
	if *c.Index != 0 || c.ID != "call_x_0" || c.Type != "function" || c.Function.Name != "a" {
		t.Errorf("call = %+v", c)
	}
	if got := flatten(p.Feed(" Then <b>bold</b>")); got.Text != " Then <b>bold</b>" {
		t.Errorf("text after the call = %q", got.Text)
	}
	if p.Calls() != 1 {
		t.Errorf("Calls() = %d", p.Calls())
	}
}

// TestParser_RunawayCallIsGivenUp: a call with no end within MaxCallBytes becomes text as
// soon as the limit passes, without waiting for the end of the stream.
func TestParser_RunawayCallIsGivenUp(t *testing.T) {
	p, _ := NewParser(Hermes, Options{MaxCallBytes: 16})
	if got := p.Feed(`<tool_call>{"name":"a","arguments":{"x":`); flatten(got).Text != `<tool_call>{"name":"a","arguments":{"x":` {
		t.Fatalf("runaway call gave %+v", flatten(got))
	}
	// Inside the limit a call still parses.
	checkLimit := func(text string, want flat) {
		t.Helper()
		for cut := 0; cut <= len(text); cut++ {
			if diff := cmpFlat(want, flatten(feed(t, Hermes, Options{MaxCallBytes: 16}, text[:cut], text[cut:]))); diff != "" {
				t.Fatalf("%q split at %d: %s", text, cut, diff)
			}
		}
	}
	checkLimit(`<tool_call>{"name":"abcde"}</tool_call>`, flat{Calls: []string{"abcde {}"}})                       // a 16-byte body
	checkLimit(`<tool_call>{"name":"abcdef"}</tool_call>`, flat{Text: `<tool_call>{"name":"abcdef"}</tool_call>`}) // 17 bytes
}
