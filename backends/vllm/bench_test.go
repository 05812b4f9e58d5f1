package vllm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// benchBody is a request carrying a catalog of n tools, each with a ~150-token
// schema (as masking's build benchmark), and the tools' names.
func benchBody(n int) ([]byte, []string) {
	var b strings.Builder
	names := make([]string, n)
	b.WriteString(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[`)
	for i := range n {
		names[i] = fmt.Sprintf("tool_%d.read_file", i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%q,"description":"Reads file %d","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of file %d to read"},"mode":{"type":"string","enum":["text","binary","lines","summary"],"description":"How to return the content"},"limit":{"type":"integer","minimum":1,"maximum":10000,"description":"Maximum number of lines or bytes to return"},"recursive":{"type":"boolean"},"filters":{"type":"array","description":"Entry conditions","items":{"type":"object","properties":{"field":{"type":"string","enum":["name","size","modified"]},"op":{"type":"string","enum":["eq","lt","gt","glob"]},"value":{"type":"string"}},"required":["field","op","value"]}}},"required":["path"]}}}`, names[i], i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String()), names
}

// BenchmarkPlace is what a tagging backend does per request with the gateway's whole
// catalog in the body (strategy mask): parse the body, build the tag for the allowed set,
// place it (vLLM: as a JSON string; SGLang: as an object) and write the new body. all
// allows every tool (the worst case), loaded a loaded set of 20.
//
//	place    Place, schemas read once per ToolsID (the path Backend took before
//	         it kept catalogs: every schema compacted, the tag escaped, per request)
//	backend  Backend.constrain with a ToolsID: the tag copied from the catalog's
//	         pieces into a pooled buffer
//	tag      the backend's tag alone, from the parsed body: allowed names checked
//	         against the catalog, the tag appended into a reused buffer (what
//	         backend adds to parsing the body and writing the new one)
func BenchmarkPlace(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		body, names := benchBody(n)
		for _, set := range []struct {
			name    string
			allowed []string
		}{{"all", names}, {"loaded", names[:20]}} {
			for _, p := range []struct {
				name string
				p    Placement
			}{{"vllm", StructuredOutputs}, {"sglang", sglangPlacement}} {
				b.Run(fmt.Sprintf("tools=%d/%s/%s/place", n, set.name, p.name), func(b *testing.B) {
					var sc oai.SchemaCache
					schemas := func(raw []byte) ([]oai.ToolSchema, error) { return sc.Get("catalog-v1", raw) }
					Place(body, set.allowed, masking.Hermes(), p.p, schemas) // schemas read
					b.ReportAllocs()
					for b.Loop() {
						if _, o, err := Place(body, set.allowed, masking.Hermes(), p.p, schemas); err != nil || o != Constrained {
							b.Fatal(o, err)
						}
					}
				})
				be := &Backend{format: masking.Hermes(), place: p.p}
				req := &backends.Request{Body: body, Allowed: set.allowed, ToolsID: "catalog-v1"}
				b.Run(fmt.Sprintf("tools=%d/%s/%s/backend", n, set.name, p.name), func(b *testing.B) {
					be.constrain(body, req) // catalog built, pieces rendered
					b.ReportAllocs()
					for b.Loop() {
						if _, o, err := be.constrain(body, req); err != nil || o != Constrained {
							b.Fatal(o, err)
						}
					}
				})
				b.Run(fmt.Sprintf("tools=%d/%s/%s/tag", n, set.name, p.name), func(b *testing.B) {
					schemas := func(raw []byte) ([]oai.ToolSchema, error) { return be.schemas.Get(req.ToolsID, raw) }
					ct := &catalogTag{str: p.p.String != nil, catalog: func([]oai.ToolSchema) *masking.Catalog {
						cat, _ := be.catalogs.GetInOrder(req.ToolsID, nil) // built by the backend rows
						return cat
					}}
					obj, err := oai.ParseObject(body)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					for b.Loop() {
						t, err := objectTag(obj, set.allowed, masking.Hermes(), schemas, nil, ct)
						if err != nil || t.Outcome != Constrained {
							b.Fatal(t.Outcome, err)
						}
						ct.dst = t.Tag[:0]
					}
				})
			}
		}
	}
}

// sglangPlacement is sglang.ResponseFormat's Tag (that package imports this one).
var sglangPlacement = Placement{Tag: func(tag []byte) ([]oai.Edit, error) { return []oai.Edit{{Key: "response_format", Value: tag}}, nil }}
