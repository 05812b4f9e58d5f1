package masking_test

import (
	"encoding/json"
	"fmt"
	"strings"

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

// The call grammar of one tool whose schema has an enum and a bounded string: the name
// is paired with its own arguments rule.
func ExampleCallGBNF() {
	spec := masking.Spec{Format: masking.Hermes(), Allowed: []string{"get_weather"}}
	g, err := masking.CallGBNF(spec, map[string]json.RawMessage{"get_weather": json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string","maxLength":20},"unit":{"enum":["c","f"]}},"required":["city"]}`)})
	if err != nil {
		panic(err)
	}
	fmt.Print(g[:strings.Index(g, "json-object ::=")])
	// Output:
	// root ::= "\n{\"name\": \"" tool "}\n</tool_call>"
	// tool ::= "get_weather" tool-args a0
	// tool-args ::= "\", \"arguments\": "
	// a0 ::= "{" ws a0-city-kv ( ws "," ws ( a0-unit-kv ) )? ws "}"
	// a0-city ::= "\"" json-char{0,20} "\""
	// a0-city-kv ::= "\"city\"" ws ":" ws a0-city
	// a0-unit ::= "\"c\"" | "\"f\""
	// a0-unit-kv ::= "\"unit\"" ws ":" ws a0-unit
}
