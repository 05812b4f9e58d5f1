//go:build llamacpp

package embedded

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
)

// The golden file is Python Jinja2 3.1.6 rendering tinymodel.ChatTemplate with Hugging
// Face's tojson (json.dumps, ensure_ascii=False, key order kept) on hermes_tools.json.
func TestTemplate_MatchesJinja2ByteForByte(t *testing.T) {
	raw, err := os.ReadFile("testdata/hermes_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/hermes_tools.golden")
	if err != nil {
		t.Fatal(err)
	}
	var req oai.ChatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	tmpl, err := compileTemplate(tinymodel.ChatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.render(req.Messages, req.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("prompt differs from Jinja2's (-want +got):\n%s", diff)
	}
	again, _ := tmpl.render(req.Messages, req.Tools)
	if again != got {
		t.Error("two renders of the same request differ")
	}
}
