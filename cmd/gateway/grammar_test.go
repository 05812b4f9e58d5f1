package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
)

func TestHermesGrammar_IsLazyUnlessRequiredAndNamesOnlyTheAllowed(t *testing.T) {
	for _, required := range []bool{false, true} {
		raw, err := hermesGrammar([]string{"search_tools", "get_files"}, required)
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
	be, err := newBackend(config.Backend{Name: "l", Kind: "llamacpp", URL: "http://127.0.0.1:8080", Models: []string{"*"}}, "", http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := be.(backends.ToolConstrainer); !ok || !c.ConstrainsTools() {
		t.Error("llama-server backends must constrain tools with a grammar (strategy mask)")
	}
}

func TestNewBackend_VLLMConstrainsTools(t *testing.T) {
	be, err := newBackend(config.Backend{Name: "v", Kind: "vllm", URL: "http://127.0.0.1:8000/v1", Models: []string{"*"}}, "", http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := be.(backends.ToolConstrainer); !ok || !c.ConstrainsTools() {
		t.Error("vLLM backends must constrain tools with a structural tag (strategy mask)")
	}
}
