package profile

import (
	"fmt"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

func benchTools(n int) []toolsearch.Tool {
	tools := make([]toolsearch.Tool, n)
	for i := range tools {
		tools[i] = tool(fmt.Sprintf("srv_tool_%04d", i), fmt.Sprintf("Tool %d does a thing with records of kind %d.", i, i%17))
	}
	return tools
}

// BenchmarkView is a request's catalog lookup: the base catalog, and a variant chosen
// by the request's metadata (built once, then cached).
func BenchmarkView(b *testing.B) {
	pro := policy.Cond{Field: "metadata.plan", Op: policy.Equals, Values: []string{"pro"}}
	desc := "Pro variant."
	c, err := New(Spec{Overrides: []Override{{Tool: "srv_tool_0003", Variants: []Variant{{When: pro, Fields: Fields{Description: &desc}}}}}},
		[]Source{{Tools: benchTools(500)}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  policy.Request
	}{{"base", req(nil, `{"plan":"free"}`)}, {"variant", req(nil, `{"plan":"pro"}`)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.View(tc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpdate is an MCP server's list_changed on a 500-tool profile: one tool added.
func BenchmarkUpdate(b *testing.B) {
	tools := benchTools(501)
	c, err := New(Spec{}, []Source{{Tools: tools[:500]}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := 500 + i%2 // add the tool, then take it away again (masked)
		if _, err := c.Update([]Source{{Tools: tools[:n]}}); err != nil {
			b.Fatal(err)
		}
	}
}
