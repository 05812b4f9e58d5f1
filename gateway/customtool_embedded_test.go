//go:build llamacpp

package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/embedded"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestEmbedded_ForcedCustomToolHeldToItsGrammar: the embedded engine (the token mask
// up to the call, then llama.cpp's grammar sampler over masking's CallGBNF) through the
// Responses door, a custom tool with a bounded regex grammar forced by tool_choice
// {"type":"custom"}: each run ends in one custom_tool_call whose input is in the
// language (the test's own Go regexp), since the random weights sample under the
// grammar.
func TestEmbedded_ForcedCustomToolHeldToItsGrammar(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	be, err := embedded.New(embedded.Options{ModelPath: model, NumCtx: 4096, Threads: enginetest.Threads})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "embedded", Kind: "embedded", Models: []string{"*"}, Backend: be}},
	}))
	defer gw.Close()
	editRE := regexp.MustCompile(`\A(add|delete|move) [0-9]{1,3}\z`)
	body := `{"model":"tiny","input":"Edit something.","tools":[{"type":"custom","name":"edit","description":"An edit command.",` +
		`"format":{"type":"grammar","syntax":"regex","definition":"(add|delete|move) [0-9]{1,3}"}}],` +
		`"tool_choice":{"type":"custom","name":"edit"},"parallel_tool_calls":false,"max_output_tokens":200,"temperature":1}`
	for i := range 3 {
		resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Status string
			Output []struct{ Type, Name, Input string }
		}
		if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("run %d: status %d: %.400s (%v)", i, resp.StatusCode, raw, err)
		}
		if r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Type != "custom_tool_call" || r.Output[0].Name != "edit" || !editRE.MatchString(r.Output[0].Input) {
			t.Errorf("run %d: %.600s: want one whole custom_tool_call to edit in its language", i, raw)
			continue
		}
		t.Logf("run %d: %q", i, r.Output[0].Input)
	}
}
