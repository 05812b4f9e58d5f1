package llamacpp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// TestTemplateBody_CatalogFirst holds the layout per format: under Hermes a leading
// system message moves behind an empty one (the template then writes the tools before
// it), under Llama 3.x the tools go into the system turn ahead of the system prompt, and
// everything else — other formats, no tools, no system message, catalog-first off, a
// client's own template options — reaches llama-server as the client sent it.
func TestTemplateBody_CatalogFirst(t *testing.T) {
	sys := `{"role":"system", "content":"You are an agent. Memory: /home/a/x"}`
	user := `{"role":"user","content":"hi"}`
	withSys := `[` + sys + `,` + user + `]`
	tests := []struct {
		name, format, body string
		on                 bool
		want               string
	}{
		{"hermes moves the system message behind an empty one", toolcall.Hermes,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, true,
			`{"messages":[{"role":"system","content":""},` + sys + `,` + user + `],"tools":` + twoTools + `}`},
		{"hermes off keeps the order", toolcall.Hermes,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, false,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`},
		{"hermes without tools keeps the order", toolcall.Hermes,
			`{"messages":` + withSys + `}`, true,
			`{"messages":` + withSys + `}`},
		{"hermes with an empty tools array keeps the order", toolcall.Hermes,
			`{"messages":` + withSys + `,"tools":[]}`, true,
			`{"messages":` + withSys + `,"tools":[]}`},
		{"hermes without a system message", toolcall.Hermes,
			`{"messages":[` + user + `],"tools":` + twoTools + `}`, true,
			`{"messages":[` + user + `],"tools":` + twoTools + `}`},
		{"hermes with an empty system message", toolcall.Hermes,
			`{"messages":[{"role":"system","content":""},` + user + `],"tools":` + twoTools + `}`, true,
			`{"messages":[{"role":"system","content":""},` + user + `],"tools":` + twoTools + `}`},
		{"llama3 asks for the tools in the system turn", toolcall.Llama3,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, true,
			`{"messages":` + withSys + `,"tools":` + twoTools + `,"chat_template_kwargs":{"tools_in_user_message":false}}`},
		{"llama3 keeps the client's own template options", toolcall.Llama3,
			`{"messages":` + withSys + `,"tools":` + twoTools + `,"chat_template_kwargs":{"x":1}}`, true,
			`{"messages":` + withSys + `,"tools":` + twoTools + `,"chat_template_kwargs":{"x":1}}`},
		{"mistral renders its own order", toolcall.Mistral,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, true,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`},
		{"harmony renders its own order", toolcall.Harmony,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, true,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`},
		{"deepseek renders its own order", toolcall.DeepSeek,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`, true,
			`{"messages":` + withSys + `,"tools":` + twoTools + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := templateBody([]byte(tc.body), tc.format, tc.on)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestChatCompletion_CatalogFirstFromRequest: the backend moves the system message only
// when the request asks for it.
func TestChatCompletion_CatalogFirstFromRequest(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"tools":` + twoTools + `}`
	f := newFake(t, "ok")
	b := newTestBackend(t, f.URL, fakeGrammar)
	for _, on := range []bool{false, true} {
		if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), CatalogFirst: on}); err != nil {
			t.Fatal(err)
		}
		got := f.last("/apply-template")
		if moved := bytes.HasPrefix(got, []byte(`{"messages":[{"role":"system","content":""},{"role":"system","content":"s"}`)); moved != on {
			t.Errorf("CatalogFirst %v: /apply-template got %s", on, got)
		}
	}
}

// FuzzCatalogFirstMessages: whatever the client's messages, the result is them
// unchanged, or the empty system message followed by every one of their elements as
// its own bytes.
func FuzzCatalogFirstMessages(f *testing.F) {
	for _, s := range []string{`[{"role":"system","content":"x"}]`, `[]`, `null`, `[{"role":"user"}]`,
		`[{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"user","content":"b"}]`, `[{"role":"system"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msgs []byte) {
		got := catalogFirstMessages(msgs)
		if bytes.Equal(got, msgs) {
			return
		}
		var in, out []json.RawMessage
		if err := json.Unmarshal(msgs, &in); err != nil {
			t.Fatalf("changed messages that are not an array: %s", msgs)
		}
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("result is not an array: %s", got)
		}
		if len(out) != len(in)+1 || string(out[0]) != neutralSystem {
			t.Fatalf("got %s from %s", got, msgs)
		}
		for i := range in {
			if !bytes.Equal(out[i+1], in[i]) {
				t.Fatalf("element %d changed: %s → %s", i, in[i], out[i+1])
			}
		}
	})
}
