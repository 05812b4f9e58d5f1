package toolsearch_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/maskgate/maskgate/toolsearch"
)

const profileTools = `[
 {"type":"function","function":{"name":"github_create_issue","description":"Create an issue in a GitHub repository.","parameters":{"type":"object","properties":{"title":{"type":"string"}}}}},
 {"type":"function","function":{"name":"github_list_issues","description":"List the issues of a GitHub repository."}},
 {"type":"function","function":{"name":"linear_create_issue","description":"Create a Linear issue."},"keywords":["ticket"]},
 {"type":"function","function":{"name":"send_email","description":"Send an email."}}
]`

func profile() *toolsearch.Catalog {
	tools, err := toolsearch.ParseTools([]byte(profileTools), "tools.json")
	if err != nil {
		log.Fatal(err)
	}
	c, err := toolsearch.New(tools)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

func ExampleIndex_Search() {
	ix := toolsearch.NewIndex(profile(), toolsearch.Options{})
	for _, r := range ix.Search("file a ticket in Linear", toolsearch.SearchOptions{TopK: 2}) {
		fmt.Printf("%s %.2f\n", r.Name, r.Score)
	}
	// Output:
	// linear_create_issue 0.47
	// github_create_issue 0.19
}

func ExampleIndex_Search_namespace() {
	ix := toolsearch.NewIndex(profile(), toolsearch.Options{})
	for _, r := range ix.Search("github.*", toolsearch.SearchOptions{}) {
		fmt.Println(r.Name)
	}
	// Output:
	// github_create_issue
	// github_list_issues
}

// Per request: the client's tools join the profile's for this request only.
func ExampleIndex_WithClient() {
	ix := toolsearch.NewIndex(profile(), toolsearch.Options{})
	client, err := toolsearch.ParseClientTools([]byte(`[{"type":"function","function":{"name":"lookup_order","description":"Find a customer order by its number."}}]`))
	if err != nil {
		log.Fatal(err) // a 400 naming tools[i]
	}
	req, err := ix.WithClient(client)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.Search("find order 1234", toolsearch.SearchOptions{TopK: 1})[0].Name)
	fmt.Println(len(ix.Search("find order 1234", toolsearch.SearchOptions{})), "results for other requests")
	fmt.Println(req.Catalog().Len(), "tools in this request's catalog")
	// Output:
	// lookup_order
	// 0 results for other requests
	// 5 tools in this request's catalog
}

func ExampleCatalog_Render() {
	c := profile()
	c.WriteTo(os.Stdout)
	fmt.Println()
	fmt.Println(c.Version()[:16])
	// Output:
	// [{"type":"function","function":{"name":"github_create_issue","description":"Create an issue in a GitHub repository.","parameters":{"type":"object","properties":{"title":{"type":"string"}}}}},{"type":"function","function":{"name":"github_list_issues","description":"List the issues of a GitHub repository."}},{"type":"function","function":{"name":"linear_create_issue","description":"Create a Linear issue."}},{"type":"function","function":{"name":"send_email","description":"Send an email."}}]
	// 6f8f7452f1d263cc
}

// topicEmbedder stands in for a model: one dimension per topic, a list of words.
type topicEmbedder [][]string

func (e topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(e))
		for j, topic := range e {
			for _, w := range topic {
				if containsWord(t, w) {
					v[j]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func ExampleHybrid_Search() {
	ix := toolsearch.NewIndex(profile(), toolsearch.Options{})
	// In production: &toolsearch.OpenAIEmbedder{BaseURL: "http://127.0.0.1:8080/v1", Model: "..."}
	model := topicEmbedder{{"email", "letter", "send"}, {"issue", "ticket", "bug"}}
	h, err := toolsearch.NewHybrid(context.Background(), ix, model, toolsearch.HybridOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// No tool has the word "letter"; its vector is close to send_email's.
	rs, err := h.Search(context.Background(), "a letter to grandma", toolsearch.SearchOptions{TopK: 1})
	if err != nil {
		log.Print(err) // the lexical results are still in rs
	}
	fmt.Println(rs[0].Name)
	// Output:
	// send_email
}
