package meta

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
)

// search_tools is toolsearch's search: a model's query in Chinese finds the tool described
// in Chinese, and a task of several steps finds a tool for each.
func TestExecute_SearchToolsReadsCJKAndTasks(t *testing.T) {
	c, err := toolsearch.New(append(append([]toolsearch.Tool(nil), testTools...),
		toolsearch.Tool{Name: "bing_search", Description: "使用必应搜索指定的关键词，并返回搜索结果"},
		toolsearch.Tool{Name: "word_cloud", Description: "根据文本生成词云图"},
	))
	if err != nil {
		t.Fatal(err)
	}
	ix := toolsearch.NewIndex(c, toolsearch.Options{})
	env := Env{Searcher: IndexSearcher{Index: ix}, Names: ix.Catalog(), Loaded: func(string) bool { return false }}
	for query, want := range map[string][]string{
		"必应搜索": {"bing_search"},
		"词云":   {"word_cloud"},
		"commit the staged changes with a message, then post a message to the Slack channel and email the recipients": {"git.commit", "slack_post_message", "send_email"},
	} {
		args, _ := json.Marshal(map[string]string{"query": query})
		out := Execute(context.Background(), Call{SearchTools, string(args)}, env)
		var got searchContent
		if err := json.Unmarshal([]byte(out.Content), &got); err != nil {
			t.Fatalf("%q: %v: %s", query, err, out.Content)
		}
		found := map[string]bool{}
		for _, r := range got.Results {
			found[r.Name] = true
		}
		for _, w := range want {
			if !found[w] {
				t.Errorf("search_tools(%q) = %s, want %s among the results", query, out.Content, w)
			}
		}
	}
}
