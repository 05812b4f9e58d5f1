package vllm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// TestBackend_TheClientsResponseFormatWins: a request with tools and a structured output
// of the client's own reaches vLLM as the client wrote it — its response_format (or
// structured_outputs, or guided_json) and its tool_choice, no structural tag beside them
// (vLLM refuses two constraints) — on both the per-request and the catalog path, and is
// not labelled mask; a response_format of type text leaves the tag in.
func TestBackend_TheClientsResponseFormatWins(t *testing.T) {
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()
	b, err := New(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(request, "}")
	for _, c := range []struct {
		extra  string
		tagged bool
	}{
		{`,"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}}}`, false},
		{`,"response_format":{"type":"json_object"}}`, false},
		{`,"structured_outputs":{"json":{"type":"object"}}}`, false},
		{`,"guided_json":{"type":"object"}}`, false},
		{`,"response_format":{"type":"text"}}`, true},
		{`,"response_format":null}`, true},
	} {
		body := base + c.extra
		for _, id := range []string{"", "v1/mask/false"} {
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Allowed: []string{"get_time"}, ToolsID: id})
			if err != nil {
				t.Fatal(err)
			}
			tagged := strings.Contains(string(got), `"structural_tag"`)
			switch {
			case tagged != c.tagged:
				t.Errorf("%s (ToolsID %q): tagged %v, want %v: %s", c.extra, id, tagged, c.tagged, got)
			case !c.tagged && (string(got) != body || resp.Strategy == "mask"):
				t.Errorf("%s (ToolsID %q): upstream got %s (strategy %q), want the client's bytes unlabelled", c.extra, id, got, resp.Strategy)
			}
		}
	}
}
