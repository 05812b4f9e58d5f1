package meta_test

import (
	"context"
	"fmt"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

func ExampleExecute() {
	cat, _ := toolsearch.New([]toolsearch.Tool{
		{Name: "send_email", Description: "Send an email to a recipient."},
		{Name: "get_weather", Description: "Get the weather for a city."},
	})
	ix := toolsearch.NewIndex(cat, toolsearch.Options{})
	env := meta.Env{Searcher: meta.IndexSearcher{Index: ix}, Names: cat}

	found := meta.Execute(context.Background(), meta.Call{Name: meta.SearchTools, Arguments: `{"query":"email someone"}`}, env)
	fmt.Println(found.Content)
	loaded := meta.Execute(context.Background(), meta.Call{Name: meta.LoadTool, Arguments: `{"toolName":"send_email"}`}, env)
	fmt.Println(loaded.Content, loaded.Load)
	// Output:
	// {"results":[{"name":"send_email","description":"Send an email to a recipient.","score":0.35}],"message":"Found 1 tool. To use one, call load_tool with {\"toolName\": \"<name>\"} (or {\"toolNames\": [\"<name>\", ...]} for several), then call it directly."}
	// {"success":true,"message":"Loaded \"send_email\": call it directly.","toolName":"send_email"} [send_email]
}
