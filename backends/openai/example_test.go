package openai_test

import (
	"fmt"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openai"
)

func ExamplePrepare() {
	body := []byte(`{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"tools":[` +
		`{"type":"function","function":{"name":"search_tools"}},` +
		`{"type":"function","function":{"name":"git.commit"}},` +
		`{"type":"function","function":{"name":"get_weather"}}]}`)
	p, err := openai.Prepare(body, []string{"search_tools", "git.commit"}, true)
	if err != nil {
		panic(err)
	}
	choice, _ := oai.Get(p.Body, "tool_choice")
	fmt.Println(string(choice))
	fmt.Println(p.Names.Real(p.Names.Wire("git.commit")))
	// Output:
	// {"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"search_tools"}},{"type":"function","function":{"name":"git_commit_373b5a92"}}]}}
	// git.commit
}
