package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/masking"
)

func TestHermesGrammar_IsLazyUnlessRequiredAndNamesOnlyTheAllowed(t *testing.T) {
	hermesGrammar := grammarFor(masking.Hermes())
	for _, required := range []bool{false, true} {
		raw, err := hermesGrammar(llamacpp.GrammarRequest{Allowed: []string{"search_tools", "get_files"}, Required: required})
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			Grammar string `json:"grammar"`
			Lazy    bool   `json:"grammar_lazy"`
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatal(err)
		}
		if g.Lazy == required {
			t.Errorf("required=%v: grammar_lazy %v", required, g.Lazy)
		}
		for _, want := range []string{`search_tools`, `get_files`} {
			if !strings.Contains(g.Grammar, want) {
				t.Errorf("grammar lacks %s:\n%s", want, g.Grammar)
			}
		}
	}
}

func TestNewBackend_LlamaCppConstrainsTools(t *testing.T) {
	be, err := newBackend(config.Backend{Name: "l", Kind: "llamacpp", URL: "http://127.0.0.1:8080", Models: []string{"*"}}, "", http.DefaultTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := be.(backends.ToolConstrainer); !ok || !c.ConstrainsTools() {
		t.Error("llama-server backends must constrain tools with a grammar (strategy mask)")
	}
}

func TestNewBackend_VLLMConstrainsTools(t *testing.T) {
	be, err := newBackend(config.Backend{Name: "v", Kind: "vllm", URL: "http://127.0.0.1:8000/v1", Models: []string{"*"}}, "", http.DefaultTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := be.(backends.ToolConstrainer); !ok || !c.ConstrainsTools() {
		t.Error("vLLM backends must constrain tools with a structural tag (strategy mask)")
	}
}

// TestNewLlamaCpp_FormatFromTheChatTemplate: without format:, the backend reads
// llama-server's chat template; a format no grammar can express leaves it
// unconstrained (remove), and an unreachable server is taken to speak Hermes.
func TestNewLlamaCpp_FormatFromTheChatTemplate(t *testing.T) {
	props := func(tmpl string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/props" {
				http.NotFound(w, r)
				return
			}
			b, _ := json.Marshal(map[string]string{"chat_template": tmpl})
			w.Write(b)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	cases := []struct {
		name, url  string
		constrains bool
	}{
		{"mistral", props(`{{- "[TOOL_CALLS]" + tool.function.name + "[ARGS]" }}`).URL, true},
		{"unknown", props(`<|im_start|>{{ message.role }}`).URL, false},
		{"unreachable", "http://127.0.0.1:1", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be, err := newBackend(config.Backend{Name: "l", Kind: "llamacpp", URL: c.url}, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := be.(backends.ToolConstrainer).ConstrainsTools(); got != c.constrains {
				t.Errorf("constrains = %v, want %v", got, c.constrains)
			}
		})
	}
}

// TestGrammarFor_NothingAllowedBansASpecialTokenTriggerOnly: with no call allowed, a
// one-token trigger is banned exactly; a text trigger (Llama 3's {"name": ") would ban
// ordinary text too, so nothing is sent.
func TestGrammarFor_NothingAllowedBansASpecialTokenTriggerOnly(t *testing.T) {
	raw, err := grammarFor(masking.Hermes())(llamacpp.GrammarRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"logit_bias":[["\u003ctool_call\u003e",false]]}` && string(raw) != `{"logit_bias":[["<tool_call>",false]]}` {
		t.Errorf("hermes, nothing allowed: %s", raw)
	}
	f, _ := masking.FormatByName("llama3")
	raw, err = grammarFor(f)(llamacpp.GrammarRequest{})
	if err != nil || raw != nil {
		t.Errorf("llama3, nothing allowed: %s, %v; want no fields", raw, err)
	}
}

// TestGrammarFor_ArgumentsFollowEachToolsSchema: the grammar sent to llama-server holds
// each allowed tool's own arguments rule, read from the request's tools array; under one
// ToolsID the array is read once (a second array under the same ID is not looked at).
func TestGrammarFor_ArgumentsFollowEachToolsSchema(t *testing.T) {
	g := grammarFor(masking.Hermes())
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"unit":{"enum":["celsius","fahrenheit"]}},"required":["unit"]}}},
		{"type":"function","function":{"name":"send_mail","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}}]`
	grammar := func(tools, id string) string {
		raw, err := g(llamacpp.GrammarRequest{Allowed: []string{"get_weather"}, Required: true, Tools: json.RawMessage(tools), ToolsID: id})
		if err != nil {
			t.Fatal(err)
		}
		var f struct{ Grammar string }
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		return f.Grammar
	}
	got := grammar(tools, "v1")
	for _, want := range []string{`"get_weather" tool-args a0`, `"\"celsius\"" | "\"fahrenheit\""`} {
		if !strings.Contains(got, want) {
			t.Errorf("grammar lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "send_mail") || strings.Contains(got, `\"to\"`) {
		t.Errorf("grammar holds a tool that is not allowed:\n%s", got)
	}
	other := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"unit":{"enum":["kelvin"]}}}}}]`
	if again := grammar(other, "v1"); again != got {
		t.Error("one ToolsID, but the tools were read again")
	}
	if fresh := grammar(other, ""); !strings.Contains(fresh, "kelvin") {
		t.Errorf("without a ToolsID the request's own tools must be read:\n%s", fresh)
	}
}
