package vllm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// TestBackend_TheClientsSchemaJoinsTheTag: a request with tools and the client's
// response_format json_schema or json_object reaches vLLM with one constraint — the tag
// in structured_outputs holding the allowed calls or the client's schema (bytes as
// sent), or the calls alone where one is required — and without the response_format
// (vLLM refuses two), on the per-request and the catalog paths, labelled mask. A client
// constraint the tag cannot carry (structured_outputs, guided_json) goes as the client
// wrote it, unlabelled; a response_format of type text or null keeps the plain tag.
func TestBackend_TheClientsSchemaJoinsTheTag(t *testing.T) {
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
	const schema = `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`
	for _, c := range []struct {
		choice, extra string
		tag           string // what the tag must end with; "" for the client's bytes
	}{
		{`"auto"`, `,"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":` + schema + `}}}`, `{"type":"json_schema","json_schema":` + schema + `}]}}`},
		{`"auto"`, `,"response_format":{"type":"json_object"}}`, `{"type":"json_schema","json_schema":{"type":"object"}}]}}`},
		{`"required"`, `,"response_format":{"type":"json_object"}}`, `"at_least_one":true}}`},
		{`"auto"`, `,"structured_outputs":{"json":{"type":"object"}}}`, ""},
		{`"auto"`, `,"guided_json":{"type":"object"}}`, ""},
		{`"auto"`, `,"response_format":{"type":"text"}}`, `"at_least_one":false}}`},
		{`"auto"`, `,"response_format":null}`, `"at_least_one":false}}`},
	} {
		body := strings.Replace(strings.TrimSuffix(request, "}"), `"tool_choice":"required"`, `"tool_choice":`+c.choice, 1) + c.extra
		for _, id := range []string{"", "v1/mask/false"} {
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Allowed: []string{"get_time"}, ToolsID: id})
			if err != nil {
				t.Fatal(err)
			}
			if c.tag == "" {
				if string(got) != body || resp.Strategy == "mask" {
					t.Errorf("%s %s (ToolsID %q): upstream got %s (strategy %q), want the client's bytes unlabelled", c.choice, c.extra, id, got, resp.Strategy)
				}
				continue
			}
			var sent struct {
				SO struct {
					Tag string `json:"structural_tag"`
				} `json:"structured_outputs"`
				RF json.RawMessage `json:"response_format"`
			}
			err = json.Unmarshal(got, &sent)
			keptRF := len(sent.RF) > 0 && !strings.Contains(c.extra, `"text"`) && !strings.Contains(c.extra, `null`)
			if err != nil || !strings.HasSuffix(sent.SO.Tag, c.tag) || keptRF || resp.Strategy != "mask" || strings.Contains(sent.SO.Tag, "get_weather") {
				t.Errorf("%s %s (ToolsID %q): strategy %q, upstream got %s", c.choice, c.extra, id, resp.Strategy, got)
			}
		}
	}
}
