package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// patchRE is Codex's apply_patch grammar (masking/lark/testdata/codex/apply_patch.lark)
// written out by hand as a Go regular expression, the test's own check of a patch:
// the begin marker, one or more add, delete or update hunks, the end marker. Lark's
// /(.+)/ is Python's dot: anything but a newline.
var patchRE = regexp.MustCompile(`\A\*\*\* Begin Patch\n(?:` +
	`\*\*\* Add File: [^\n]+\n(?:\+[^\n]*\n)+` +
	`|\*\*\* Delete File: [^\n]+\n` +
	`|\*\*\* Update File: [^\n]+\n(?:\*\*\* Move to: [^\n]+\n)?(?:(?:(?:@@|@@ [^\n]+)\n|[-+ ][^\n]*\n)+(?:\*\*\* End of File\n)?)?` +
	`)+\*\*\* End Patch\n?\z`)

// patchPrefix says s is the start of some patch patchRE matches: its whole lines follow
// apply_patch's grammar line by line, and its last, unfinished line starts a line the
// grammar allows there.
func patchPrefix(s string) bool {
	lines := strings.Split(s, "\n")
	partial := lines[len(lines)-1]
	const (
		begin      = iota
		hunk       // a hunk must come
		addFirst   // an add hunk's first + line must come
		addMore    // more + lines, another hunk or the end
		afterHunk  // another hunk or the end
		updateHead // after "*** Update File:": move, changes, or as afterHunk
		changes    // after a move or a change line
		end
	)
	header := func(l string) (int, bool) {
		for p, next := range map[string]int{"*** Add File: ": addFirst, "*** Delete File: ": afterHunk, "*** Update File: ": updateHead} {
			if name, ok := strings.CutPrefix(l, p); ok && name != "" {
				return next, true
			}
		}
		return 0, false
	}
	isChange := func(l string) bool {
		return l == "@@" || strings.HasPrefix(l, "@@ ") && len(l) > 3 || l != "" && strings.ContainsRune("+- ", rune(l[0])) && !strings.HasPrefix(l, "@@")
	}
	state := begin
	for _, l := range lines[:len(lines)-1] {
		switch {
		case state == begin && l == "*** Begin Patch":
			state = hunk
		case (state == addFirst || state == addMore) && strings.HasPrefix(l, "+"):
			state = addMore
		case state == updateHead && strings.HasPrefix(l, "*** Move to: ") && len(l) > len("*** Move to: "):
			state = changes
		case (state == updateHead || state == changes) && isChange(l):
			state = changes
		case state == changes && l == "*** End of File":
			state = afterHunk
		case state == hunk || state == afterHunk || state == addMore || state == updateHead || state == changes:
			if next, ok := header(l); ok {
				state = next
			} else if state != hunk && l == "*** End Patch" {
				state = end
			} else {
				return false
			}
		default:
			return false
		}
	}
	if partial == "" {
		return true
	}
	starts := func(full string) bool { return strings.HasPrefix(full, partial) || strings.HasPrefix(partial, full) }
	switch state {
	case begin:
		return strings.HasPrefix("*** Begin Patch", partial)
	case end:
		return false
	case addFirst:
		return partial[0] == '+'
	}
	for _, h := range []string{"*** Add File: ", "*** Delete File: ", "*** Update File: "} {
		if starts(h) {
			return true
		}
	}
	if state != hunk && strings.HasPrefix("*** End Patch", partial) {
		return true
	}
	if state == addMore && partial[0] == '+' {
		return true
	}
	if state == updateHead && starts("*** Move to: ") {
		return true
	}
	if (state == updateHead || state == changes) && (strings.ContainsRune("+- @", rune(partial[0]))) {
		return true
	}
	return state == changes && strings.HasPrefix("*** End of File", partial)
}

func TestPatchRE_TheTestsOwnChecker(t *testing.T) {
	for text, want := range map[string]bool{
		"":        true,
		"*** Beg": true,
		"*** Begin Patch\n*** Add File: a\n+x\n*** E":   true,
		"*** Begin Patch\n*** Up":                       true,
		"*** Begin Patch\n*** Update File: a\n@@ f\n-x": true,
		"*** Begin Patch\nx":                            false,
		"*** Begin Patch\n*** Add File: a\nx":           false,
		"*** Begin Patch\n*** End Patch\n":              false,
		"{\"input\": \"":                                false,
	} {
		if got := patchPrefix(text); got != want {
			t.Errorf("patchPrefix(%q) = %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]bool{
		"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n":                        true,
		"*** Begin Patch\n*** Update File: a\n@@ f\n-x\n+y\n*** End of File\n*** End Patch": true,
		"*** Begin Patch\n*** Delete File: a\n*** Update File: b\n*** End Patch\n":          true,
		"*** Begin Patch\n*** End Patch\n":                                                  false,
		"*** Begin Patch\n*** Add File: a.txt\nhi\n*** End Patch\n":                         false,
		`{"input": "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"}`:           false,
		"*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch\n":             false,
		"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nmore":                    false,
	} {
		if got := patchRE.MatchString(text); got != want {
			t.Errorf("%q: match %v, want %v", text, got, want)
		}
	}
}

// customToolConfig: a constrained token takes up to half a second on a loaded machine
// (see the test), so a 200-token answer needs minutes, not the default's seconds.
const customToolConfig = `backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 5m
`

// TestLlamaServer_ForcedApplyPatchIsAPatch: through the gateway's Responses door to a
// real llama-server serving the tiny random-weight model, Codex's apply_patch custom
// tool (its real Lark grammar) forced by tool_choice {"type":"custom"}: the answer is a
// custom_tool_call whose input is the raw patch text, and that text is a patch by the
// test's own checker, whatever the random weights sampled, since the engine held them
// to the grammar. A random model may also run out of max_output_tokens inside the
// patch; each run must end in one of the two, every finished call must parse, and at
// least one of the runs must finish (the grammar lets a random model end a patch:
// "*** End Patch" is the only way out once a line ends). One run is streamed, which
// must carry the input in response.custom_tool_call_input.delta and .done.
func TestLlamaServer_ForcedApplyPatchIsAPatch(t *testing.T) {
	ls := enginetest.Llama(t)
	base, logs := startGateway(t, strings.Replace(customToolConfig, "URL", ls.URL, 1), nil)
	src, err := os.ReadFile(filepath.Join("..", "..", "masking", "lark", "testdata", "codex", "apply_patch.lark"))
	if err != nil {
		t.Fatal(err)
	}
	tool, err := json.Marshal(map[string]any{
		"type": "custom", "name": "apply_patch",
		"description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
		"format":      map[string]string{"type": "grammar", "syntax": "lark", "definition": string(src)},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := func(tool []byte, name string, maxTokens int, stream bool) string {
		b, _ := json.Marshal(stream)
		return `{"model":"` + ls.Model + `","input":"Create hello.txt containing hi.","tools":[` + string(tool) +
			`],"tool_choice":{"type":"custom","name":"` + name + `"},"parallel_tool_calls":false,"max_output_tokens":` + itoa(maxTokens) +
			`,"temperature":1,"stream":` + string(b) + `}`
	}
	const runs = 3
	finished, cut := 0, 0
	for i := range runs {
		resp, raw := postJSON(t, base+"/v1/responses", body(tool, "apply_patch", 48, false))
		if resp.StatusCode != 200 {
			t.Fatalf("run %d: status %d: %s\nlog:\n%s", i, resp.StatusCode, raw, logs.String())
		}
		var r struct {
			Status            string `json:"status"`
			IncompleteDetails *struct {
				Reason string `json:"reason"`
			} `json:"incomplete_details"`
			Output []struct {
				Type, Name, Input, CallID string
			} `json:"output"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Status == "completed":
			if len(r.Output) != 1 || r.Output[0].Type != "custom_tool_call" || r.Output[0].Name != "apply_patch" {
				t.Errorf("run %d: output %.400s, want one custom_tool_call to apply_patch", i, raw)
				continue
			}
			in := r.Output[0].Input
			if !patchRE.MatchString(in) {
				t.Errorf("run %d: input is not a patch:\n%s", i, in)
				continue
			}
			finished++
			t.Logf("run %d: a patch of %d bytes in %d tokens: %.120q", i, len(in), r.Usage.OutputTokens, in)
		case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
			// A call cut inside its input comes back with the text as far as it came,
			// which the grammar held on a patch's path.
			if len(r.Output) != 1 || r.Output[0].Type != "custom_tool_call" || !patchPrefix(r.Output[0].Input) {
				t.Errorf("run %d: cut output %.400s, want one custom_tool_call whose input starts a patch", i, raw)
				continue
			}
			cut++
			t.Logf("run %d: cut at %d tokens: %q", i, r.Usage.OutputTokens, r.Output[0].Input)
		default:
			t.Errorf("run %d: status %q: %.400s", i, r.Status, raw)
		}
	}
	t.Logf("%d of %d runs finished a patch, %d ran out of tokens inside one", finished, runs, cut)

	// A regex tool a random model can finish: the grammar bounds it, so every run
	// must end in a whole call whose input is in the language, three whole and one
	// streamed, whose input arrives in the custom tool call's own events.
	edit := []byte(`{"type":"custom","name":"edit","description":"An edit command.","format":{"type":"grammar","syntax":"regex","definition":"(add|delete|move) [0-9]{1,3}"}}`)
	editRE := regexp.MustCompile(`\A(add|delete|move) [0-9]{1,3}\z`)
	for i := range 3 {
		resp, raw := postJSON(t, base+"/v1/responses", body(edit, "edit", 200, false))
		var r struct {
			Status string
			Output []struct{ Type, Name, Input string }
		}
		if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("edit run %d: status %d: %.400s (%v)", i, resp.StatusCode, raw, err)
		}
		if r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Type != "custom_tool_call" || r.Output[0].Name != "edit" || !editRE.MatchString(r.Output[0].Input) {
			t.Errorf("edit run %d: %.600s: want one whole custom_tool_call to edit in its language", i, raw)
			continue
		}
		t.Logf("edit run %d: %q", i, r.Output[0].Input)
	}
	resp, raw := postJSON(t, base+"/v1/responses", body(edit, "edit", 200, true))
	if resp.StatusCode != 200 {
		t.Fatalf("stream: status %d: %s", resp.StatusCode, raw)
	}
	var deltas strings.Builder
	var done, doneItem string
	var completed bool
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type, Delta, Input string
			Item               struct{ Type, Input string }
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		switch ev.Type {
		case "response.custom_tool_call_input.delta":
			deltas.WriteString(ev.Delta)
		case "response.custom_tool_call_input.done":
			done = ev.Input
		case "response.output_item.done":
			if ev.Item.Type == "custom_tool_call" {
				doneItem = ev.Item.Input
			}
		case "response.completed":
			completed = true
		}
	}
	if !completed || deltas.String() != done || doneItem != done || !editRE.MatchString(done) {
		t.Errorf("stream: completed %v, deltas %q, done %q, item %q: want one input in the language in all three\n%.2000s", completed, deltas.String(), done, doneItem, raw)
	} else {
		t.Logf("stream: %q", done)
	}
}
