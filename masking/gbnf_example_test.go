package masking_test

import (
	"fmt"

	"github.com/maskgate/maskgate/masking"
)

func ExampleGBNF() {
	spec := masking.Spec{Format: masking.Hermes(), Allowed: []string{"search_tools", "get_file"}}
	g, err := masking.GBNF(spec, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Lazy, g.Triggers, g.PreservedTokens)
	// Output: true [{1 <tool_call>}] [<tool_call> </tool_call>]
}

func ExampleAllowedTools() {
	spec := masking.Spec{Mode: masking.ModeRequired, Allowed: []string{"get_file"}}
	fmt.Println(string(masking.AllowedTools(spec)))
	// Output: {"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_file"}}]}}
}

func ExampleStructuralTag() {
	spec := masking.Spec{Format: masking.Hermes(), Allowed: []string{"get_file"}}
	tag, err := masking.StructuralTag(spec, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(tag))
	// Output: {"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<tool_call>"],"tags":[{"type":"tag","begin":"<tool_call>\n{\"name\": \"get_file\", \"arguments\": ","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"}\n</tool_call>"}],"at_least_one":false}}
}
