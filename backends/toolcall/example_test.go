package toolcall_test

import (
	"fmt"

	"github.com/maskgate/maskgate/backends/toolcall"
)

func ExampleParse() {
	m, err := toolcall.Parse(toolcall.Mistral, `Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`,
		toolcall.Options{ResponseID: "chatcmpl-42"})
	if err != nil {
		panic(err)
	}
	c := m.ToolCalls[0]
	fmt.Printf("%q %s %s %s\n", m.Content, c.ID, c.Function.Name, c.Function.Arguments)
	// Output: "Checking." s6KgdMKeG get_weather {"city": "Paris"}
}

// A Parser sends content as it comes and a call once it is whole.
func ExampleParser() {
	p, err := toolcall.NewParser(toolcall.Harmony, toolcall.Options{ResponseID: "chatcmpl-7"})
	if err != nil {
		panic(err)
	}
	for _, delta := range []string{
		"<|channel|>analysis<|message|>Wea", "ther needed.<|end|><|start|>assistant<|channel|>comm",
		"entary to=functions.get_weather <|constrain|>json<|message|>{\"city\":", " \"Oslo\"}<|call|>",
	} {
		for _, ev := range p.Feed(delta) {
			switch {
			case ev.Reasoning != "":
				fmt.Printf("reasoning %q\n", ev.Reasoning)
			case ev.Call != nil:
				fmt.Println("call", *ev.Call.Index, ev.Call.ID, ev.Call.Function.Name, ev.Call.Function.Arguments)
			}
		}
	}
	p.Finish()
	// Output:
	// reasoning "Wea"
	// reasoning "ther needed."
	// call 0 call_7_0 get_weather {"city": "Oslo"}
}
