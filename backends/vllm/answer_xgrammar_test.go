package vllm_test

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
	"github.com/maskgate/maskgate/backends/sglang"
	"github.com/maskgate/maskgate/backends/vllm"
	"github.com/maskgate/maskgate/internal/xgrammartest"
)

// TestXGrammar_ToolsBesideTheClientsSchema: a request with tools and the client's
// response_format json_schema, in every format, as the vLLM and SGLang backends send it
// (one tag, the client's response_format out of vLLM's body): in the real xgrammar the
// tag accepts an allowed call and an answer valid for the schema, and refuses an answer
// against the schema, a call of a tool the gateway did not allow, free text and (beside
// an answer: xgrammar's "or" takes only formats that end) two calls; with tool_choice
// required it accepts the call and refuses the answer.
func TestXGrammar_ToolsBesideTheClientsSchema(t *testing.T) {
	var upstream []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()
	const schema = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"],"additionalProperties":false}`
	rf := `,"response_format":{"type":"json_schema","json_schema":{"name":"w","strict":true,"schema":` + schema + `}}}`
	placements := []struct {
		name string
		new  func(openaicompat.Options) (*vllm.Backend, error)
	}{{"vllm", vllm.New}, {"sglang", sglang.New}}
	var cases []xgrammartest.Case
	for _, p := range placements {
		for _, format := range []string{"hermes", "llama3", "mistral", "harmony", "deepseek"} {
			w := xgWires[format]
			b, err := p.new(openaicompat.Options{Name: p.name, BaseURL: up.URL + "/v1", Format: format})
			if err != nil {
				t.Fatal(err)
			}
			for _, choice := range []string{`"auto"`, `"required"`} {
				body := strings.TrimSuffix(xgRequest(choice), "}") + rf
				resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Allowed: []string{"get_file"}})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Strategy != "mask" {
					t.Errorf("%s/%s/%s: strategy %q", p.name, format, choice, resp.Strategy)
				}
				tag := placementTag(t, p.name, upstream)
				two := [2]string{"get_file", `{"path": "b.go"}`}
				if p.name == "vllm" && strings.Contains(string(upstream), `"response_format"`) {
					t.Errorf("vllm/%s: the client's response_format went beside the tag: %s", format, upstream)
				}
				required := choice == `"required"`
				outs := []xgrammartest.Output{
					{Text: w.output(true, [2]string{"get_file", `{"path": "a.go"}`}), Accept: true, Kind: "allowed call"},
					{Text: w.output(true, [2]string{"get_files", `{"glob": "*"}`}), Accept: false, Kind: "disabled call"},
					{Text: `{"city": "Oslo", "days": 3}`, Accept: !required, Kind: "schema answer"},
					{Text: `{"city": "Oslo"}`, Accept: false, Kind: "answer against the schema"},
					{Text: `{"city": "Oslo", "days": 3, "x": 1}`, Accept: false, Kind: "answer against the schema"},
					{Text: "Hello.", Accept: false, Kind: "free text"},
				}
				if w.multi {
					outs = append(outs, xgrammartest.Output{Text: w.output(true, [2]string{"get_file", `{"path": "a.go"}`}, two), Accept: required, Kind: "two calls"})
				}
				cases = append(cases, xgrammartest.Case{Name: p.name + "/" + format + "/" + choice, Tag: tag, Outputs: outs})
			}
		}
	}
	rep := xgrammartest.Check(t, cases)
	t.Logf("xgrammar %s: %d tags; right %v, wrong %v", rep.Version, len(cases), rep.Right, rep.Wrong)
}

// placementTag takes the tag out of a body: vLLM's structured_outputs.structural_tag
// string, SGLang's response_format object.
func placementTag(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	if name == "vllm" {
		return vllmTag(t, body)
	}
	return sglangTag(t, body)
}

func vllmTag(t *testing.T, body []byte) []byte {
	t.Helper()
	var b struct {
		SO struct {
			Tag *string `json:"structural_tag"`
		} `json:"structured_outputs"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.SO.Tag == nil {
		t.Fatalf("no structured_outputs.structural_tag string (%v): %s", err, body)
	}
	return []byte(*b.SO.Tag)
}

func sglangTag(t *testing.T, body []byte) []byte {
	t.Helper()
	var b struct {
		RF json.RawMessage `json:"response_format"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.RF) == 0 || b.RF[0] != '{' {
		t.Fatalf("no response_format object (%v): %s", err, body)
	}
	return b.RF
}
