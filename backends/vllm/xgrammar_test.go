package vllm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/backends/sglang"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// vLLM and SGLang take the tag vllm.BuildTag renders in different places. This test
// takes it out of the request bodies both backends send upstream — vLLM's
// structured_outputs.structural_tag (a JSON string) and SGLang's response_format (an
// object) — for every format and for each way a client asks for calls, and checks it in
// the real xgrammar (internal/xgrammartest) against model outputs written here by hand
// from the chat templates.

// xgWire is one format's call as a model writes it: lead (before a required call's
// first call), each call, sep between parallel calls, tail after the last.
type xgWire struct {
	lead, sep, tail string
	call            func(name, args string) string
	multi           bool
}

var xgWires = map[string]xgWire{
	"hermes": {sep: "\n", multi: true, call: func(n, a string) string {
		return "<tool_call>\n{\"name\": \"" + n + "\", \"arguments\": " + a + "}\n</tool_call>"
	}},
	"llama3": {call: func(n, a string) string { return `{"name": "` + n + `", "parameters": ` + a + `}` }},
	"mistral": {multi: true, call: func(n, a string) string {
		return "[TOOL_CALLS]" + n + "[ARGS]" + a
	}},
	"harmony": {lead: "<|channel|>commentary ", call: func(n, a string) string {
		return "to=functions." + n + " <|constrain|>json<|message|>" + a + "<|call|>"
	}},
	"deepseek": {lead: "<｜tool▁calls▁begin｜>", tail: "<｜tool▁calls▁end｜>", multi: true, call: func(n, a string) string {
		return "<｜tool▁call▁begin｜>" + n + "<｜tool▁sep｜>" + a + "<｜tool▁call▁end｜>"
	}},
}

// output is a model's output making calls (name, args pairs).
func (w xgWire) output(required bool, calls ...[2]string) string {
	var b strings.Builder
	if required {
		b.WriteString(w.lead)
	}
	for i, c := range calls {
		if i > 0 {
			b.WriteString(w.sep)
		}
		b.WriteString(w.call(c[0], c[1]))
	}
	b.WriteString(w.tail)
	return b.String()
}

// xgRequestTools are the request's tools: prefix-sharing and unicode names, a nested
// schema. good satisfies each schema; bad breaks it.
var xgRequestTools = []struct{ name, params, good, bad string }{
	{"get", `null`, `{"k": [1, {"v": null}]}`, `[1]`},
	{"get_file", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, `{"path": "a.go"}`, `{"path": 1}`},
	{"get_files", `{"type":"object","properties":{"glob":{"type":"string"}}}`, `{"glob": "*.go"}`, `{"glob": false}`},
	{"git.commit", `{"type":"object","properties":{"message":{"type":"string"},"author":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},"required":["message","author"]}`,
		`{"message": "fix", "author": {"name": "Ada"}}`, `{"message": "fix", "author": {}}`},
	{"日本_検索", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, `{"q": "東京"}`, `{}`},
}

func xgRequest(toolChoice string) string {
	var tools []string
	for _, tl := range xgRequestTools {
		tools = append(tools, `{"type":"function","function":{"name":"`+tl.name+`","parameters":`+tl.params+`}}`)
	}
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(tools, ",") + `]`
	if toolChoice != "" {
		body += `,"tool_choice":` + toolChoice
	}
	return body + `}`
}

// TestXGrammar_VLLMAndSGLangBodies: the tag in every request body the vLLM and SGLang
// backends send compiles in xgrammar, accepts each call the gateway's allowed set and
// the client's tool_choice leave, and refuses every other tool of the request.
func TestXGrammar_VLLMAndSGLangBodies(t *testing.T) {
	var upstream []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()

	placements := []struct {
		name string
		new  func(openaicompat.Options) (*vllm.Backend, error)
		// tag takes the tag out of the body sent upstream.
		tag func(t *testing.T, body []byte) []byte
	}{
		{"vllm", vllm.New, func(t *testing.T, body []byte) []byte {
			var b struct {
				SO struct {
					Tag *string `json:"structural_tag"`
				} `json:"structured_outputs"`
			}
			if err := json.Unmarshal(body, &b); err != nil || b.SO.Tag == nil {
				t.Fatalf("no structured_outputs.structural_tag string (%v): %s", err, body)
			}
			return []byte(*b.SO.Tag)
		}},
		{"sglang", sglang.New, func(t *testing.T, body []byte) []byte {
			var b struct {
				RF json.RawMessage `json:"response_format"`
			}
			if err := json.Unmarshal(body, &b); err != nil || len(b.RF) == 0 || b.RF[0] != '{' {
				t.Fatalf("no response_format object (%v): %s", err, body)
			}
			return b.RF
		}},
	}
	choices := []struct {
		name       string
		toolChoice string
		allowed    []string // the gateway's allowed set; nil: every tool
		want       []string // the calls the tag must allow, written out
		required   bool
	}{
		{"auto", ``, []string{"get_file", "git.commit", "日本_検索"}, []string{"get_file", "git.commit", "日本_検索"}, false},
		{"auto-every-tool", `"auto"`, nil, []string{"get", "get_file", "get_files", "git.commit", "日本_検索"}, false},
		{"required", `"required"`, []string{"get_files", "get"}, []string{"get_files", "get"}, true},
		{"named", `{"type":"function","function":{"name":"get_file"}}`, []string{"get", "get_file", "get_files"}, []string{"get_file"}, true},
		{"allowed_tools", `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[` +
			`{"type":"function","function":{"name":"get"}},{"type":"function","function":{"name":"git.commit"}}]}}`,
			nil, []string{"get", "git.commit"}, true},
	}

	var cases []xgrammartest.Case
	var formats []string
	for _, p := range placements {
		for _, format := range []string{"hermes", "llama3", "mistral", "harmony", "deepseek"} {
			w := xgWires[format]
			b, err := p.new(openaicompat.Options{Name: p.name, BaseURL: up.URL + "/v1", Format: format})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range choices {
				upstream = nil
				if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(xgRequest(tc.toolChoice)), Allowed: tc.allowed}); err != nil {
					t.Fatalf("%s/%s/%s: %v", p.name, format, tc.name, err)
				}
				var outs []xgrammartest.Output
				add := func(accept bool, kind, text string) {
					outs = append(outs, xgrammartest.Output{Text: text, Accept: accept, Kind: kind})
				}
				for _, tl := range xgRequestTools {
					if !slices.Contains(tc.want, tl.name) {
						add(false, "disabled call", w.output(tc.required, [2]string{tl.name, tl.good}))
						continue
					}
					add(true, "allowed call", w.output(tc.required, [2]string{tl.name, tl.good}))
					add(false, "arguments against the schema", w.output(tc.required, [2]string{tl.name, tl.bad}))
					add(!tc.required, "text, then a call", "Sure.\n"+w.output(tc.required, [2]string{tl.name, tl.good}))
				}
				if len(tc.want) > 1 {
					add(w.multi, "parallel calls", w.output(tc.required,
						[2]string{tc.want[0], xgGood(t, tc.want[0])}, [2]string{tc.want[1], xgGood(t, tc.want[1])}))
				}
				add(!tc.required, "no call", "Hello.")
				cases = append(cases, xgrammartest.Case{
					Name:    p.name + "/" + format + "/" + tc.name,
					Tag:     p.tag(t, upstream),
					Outputs: outs,
				})
				formats = append(formats, p.name+" "+format)
			}
		}
	}

	rep := xgrammartest.Check(t, cases)
	t.Logf("xgrammar %s: %d tags from request bodies", rep.Version, len(cases))
	type tally struct{ allowed, allowedAll, disabled, disabledAll, other, otherAll int }
	byFormat := map[string]*tally{}
	var order []string
	for i, c := range cases {
		n := byFormat[formats[i]]
		if n == nil {
			n = &tally{}
			byFormat[formats[i]] = n
			order = append(order, formats[i])
		}
		for j, o := range c.Outputs {
			right := rep.Results[i].Err == "" && rep.Results[i].Accepted[j] == o.Accept
			switch o.Kind {
			case "allowed call":
				n.allowedAll++
				if right {
					n.allowed++
				}
			case "disabled call":
				n.disabledAll++
				if right {
					n.disabled++
				}
			default:
				n.otherAll++
				if right {
					n.other++
				}
			}
		}
	}
	var b strings.Builder
	for _, f := range order {
		n := byFormat[f]
		fmt.Fprintf(&b, "\n  %-16s allowed calls accepted %2d/%-2d, disabled calls refused %2d/%-2d, other outputs as expected %2d/%-2d",
			f, n.allowed, n.allowedAll, n.disabled, n.disabledAll, n.other, n.otherAll)
	}
	t.Log(b.String())
}

func xgGood(t *testing.T, name string) string {
	for _, tl := range xgRequestTools {
		if tl.name == name {
			return tl.good
		}
	}
	t.Fatalf("no test tool %q", name)
	return ""
}
