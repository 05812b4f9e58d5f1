package sglang

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/masking"
)

// TestCatalogFirst_GoldenBodies: the body SGLang receives for a catalog-first request,
// per format: under Hermes (configured, or the default) the client's system message sits
// behind an empty one, so the template writes the tools first; every other format gets
// the messages as the client sent them. The tag is in response_format either way.
func TestCatalogFirst_GoldenBodies(t *testing.T) {
	const msgs = `[{"role":"system","content":"You are an agent. Project: /home/a"},{"role":"user","content":"hi"}]`
	in := `{"model":"qwen","messages":` + msgs + `,"tools":` + tools + `}`
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()
	for _, format := range append([]string{""}, masking.FormatNames()...) {
		name := format
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			b, err := New(openaicompat.Options{Name: "s", BaseURL: up.URL + "/v1", Format: format})
			if err != nil {
				t.Fatal(err)
			}
			req := &backends.Request{Body: []byte(in), Allowed: []string{"get_weather"}, CatalogFirst: true}
			if _, err := b.ChatCompletion(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "catalog_first_"+name+".json")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body changed:\n got %s\nwant %s", got, want)
			}
			wantMsgs := msgs
			if format == "" || format == "hermes" {
				wantMsgs = `[` + oai.EmptySystem + `,` + msgs[1:]
			}
			if m, _ := oai.Get(got, "messages"); string(m) != wantMsgs {
				t.Errorf("messages %s, want %s", m, wantMsgs)
			}
			if rf, _ := oai.Get(got, "response_format"); !bytes.Contains(rf, []byte(`"structural_tag"`)) {
				t.Errorf("no tag in response_format: %s", got)
			}
		})
	}
}
