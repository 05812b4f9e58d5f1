package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
)

// A call max_tokens cut is closed into the JSON a reader of the history can parse,
// keeping what the model wrote as the start of it.
func TestCloseJSON_CutArgumentsBecomeTheirClosedPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`{`, `{}`},
		{`{"text": "alpha bravo c`, `{"text": "alpha bravo c"}`},
		{`{"te`, `{"te":null}`},
		{`{"text"`, `{"text":null}`},
		{`{"text": `, `{"text":null}`},
		{`{"a": 1, `, `{"a": 1}`},
		{`{"a": 1,"b": [1, 2`, `{"a": 1,"b": [1, 2]}`},
		{`{"a": [1, `, `{"a": [1]}`},
		{`{"a": [`, `{"a": []}`},
		{`{"a": tr`, `{"a": true}`},
		{`{"a": nu`, `{"a": null}`},
		{`{"a": -`, `{"a": -0}`},
		{`{"a": 1.`, `{"a": 1.0}`},
		{`{"a": 2e`, `{"a": 2e0}`},
		{`{"a": 2e+`, `{"a": 2e+0}`},
		{`{"a": "x\`, `{"a": "x"}`},
		{`{"a": "x\u00`, `{"a": "x"}`},
		{`{"a": "x\u00e9`, `{"a": "x\u00e9"}`},
		{`{"a": "x\"y`, `{"a": "x\"y"}`},
		{`{"a": {"b": {"c": "d`, `{"a": {"b": {"c": "d"}}}`},
		{`{"a": 1}`, `{"a": 1}`},
		{`[{"a": 1}, {"b`, `[{"a": 1}, {"b":null}]`},
		{`not json at all`, `{}`},
		{`{"a" 1`, `{"a":null}`},
	} {
		got := closeJSON(tc.in)
		if got != tc.want {
			t.Errorf("closeJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Only arguments that are not JSON are closed, and the calls passed in are not changed.
func TestClosedArguments_LeavesWholeCallsAndTheInputAlone(t *testing.T) {
	calls := []oai.ToolCall{
		{ID: "a", Function: oai.FunctionCall{Name: "whole", Arguments: `{"x": 1}`}},
		{ID: "b", Function: oai.FunctionCall{Name: "cut", Arguments: `{"text": "al`}},
	}
	got := closedArguments(calls)
	if got[0].Function.Arguments != `{"x": 1}` || got[1].Function.Arguments != `{"text": "al"}` {
		t.Errorf("closed = %+v", got)
	}
	if calls[1].Function.Arguments != `{"text": "al` {
		t.Errorf("the input changed: %q", calls[1].Function.Arguments)
	}
}

// Every cut of a valid document closes into valid JSON that keeps all of the cut up to
// its last whole token; any text at all gives valid JSON.
func FuzzCloseJSON(f *testing.F) {
	for _, s := range []string{`{"text": "alpha \"bravo\" \u00e9", "n": [1, -2.5e3, true, null, {"k": false}]}`, `[]`, `"s"`, `12`, `{"a":{}}`} {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, doc string, cut int) {
		if got := closeJSON(doc); !json.Valid([]byte(got)) {
			t.Fatalf("closeJSON(%q) = %q, not JSON", doc, got)
		}
		if !json.Valid([]byte(doc)) || cut < 0 || cut > len(doc) {
			return
		}
		got := closeJSON(doc[:cut])
		if !json.Valid([]byte(got)) {
			t.Fatalf("closeJSON(%q) = %q, not JSON", doc[:cut], got)
		}
		// What is kept: the cut less at most a trailing token being written (a
		// partial escape, number or literal, a comma, white space).
		kept := strings.TrimRight(doc[:cut], " \t\r\n,\\u0123456789abcdefABCDEF+-.eElrsn")
		if strings.HasPrefix(doc, "{") || strings.HasPrefix(doc, "[") {
			if !strings.HasPrefix(got, kept[:len(kept)-min(len(kept), 1)]) && got != "{}" {
				t.Fatalf("closeJSON(%q) = %q, does not start with %q", doc[:cut], got, kept)
			}
		}
	})
}
