package gateway_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// GET /v1/tools/search is toolsearch's search: a CJK query finds the tool whose
// description says it, and a task of several steps a tool for each step.
func TestToolSearch_CJKAndTaskQueries(t *testing.T) {
	tools, err := toolsearch.ParseTools([]byte(`[
 {"type":"function","function":{"name":"bing_search","description":"使用必应搜索指定的关键词，并返回搜索结果"}},
 {"type":"function","function":{"name":"fetch_page","description":"获取网页内容，并转换为 Markdown"}},
 {"type":"function","function":{"name":"naver_search","description":"네이버에서 웹 검색을 수행합니다"}},
 {"type":"function","function":{"name":"jp_search","description":"ウェブ検索を実行します"}},
 {"type":"function","function":{"name":"github_create_issue","description":"Open a new issue in a GitHub repository."}},
 {"type":"function","function":{"name":"slack_send_message","description":"Post a message to a Slack channel."}},
 {"type":"function","function":{"name":"calendar_create_event","description":"Schedule a meeting on the calendar."}}
]`), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{Tools: toolsearch.NewIndex(cat, toolsearch.Options{}), Tokens: counter}))
	defer srv.Close()
	for q, want := range map[string][]string{
		"必应搜索":  {"bing_search"},
		"网页内容":  {"fetch_page"},
		"웹 검색":  {"naver_search"},
		"ウェブ検索": {"jp_search"},
		"open a new issue in the GitHub repository, then post a message to the Slack channel and schedule a meeting on the calendar": {
			"github_create_issue", "slack_send_message", "calendar_create_event"},
	} {
		resp, body := get(t, srv.URL+"/v1/tools/search?q="+url.QueryEscape(q))
		if resp.StatusCode != 200 {
			t.Fatalf("%q: status %d: %s", q, resp.StatusCode, body)
		}
		var got struct {
			Results []struct {
				Name  string  `json:"name"`
				Score float64 `json:"score"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, r := range got.Results {
			found[r.Name] = true
			if r.Score <= 0 || r.Score > 1 {
				t.Errorf("%q: %s scored %v", q, r.Name, r.Score)
			}
		}
		if len(got.Results) == 0 || got.Results[0].Name != want[0] {
			t.Errorf("%q: %s, want %s first", q, body, want[0])
		}
		for _, w := range want {
			if !found[w] {
				t.Errorf("%q: %s, want %s among the results", q, body, w)
			}
		}
	}
}
