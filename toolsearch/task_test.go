package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClauses_SplitsStepsNotLists(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"search the web for AI news, save a summary to notes.md and post it to the #news Slack channel",
			[]string{"search the web for AI news", "save a summary to notes.md", "post it to the #news Slack channel"}},
		{"open https://example.com/pricing in a browser then take a screenshot of the page layout",
			[]string{"open https://example.com/pricing in a browser", "take a screenshot of the page layout"}},
		// "and" joins a list here: the short part stays with its clause.
		{"give me the latitude and longitude of the Eiffel Tower", nil},
		{"read the config file and summarize", nil},
		{"查询杭州明天的天气，然后规划从西湖到灵隐寺的步行路线", []string{"查询杭州明天的天气", "规划从西湖到灵隐寺的步行路线"}},
		// 合并 ("merge") holds 并, which is not a clause mark on its own.
		{"合并这两个分支的代码", nil},
		{"東京の天気を調べて、Slackのチャンネルに投稿して", []string{"東京の天気を調べて", "Slackのチャンネルに投稿して"}},
		{"서울 날씨를 확인하고 주간 기온을 꺾은선 차트로 그려줘", []string{"서울 날씨를 확인하고", "주간 기온을 꺾은선 차트로 그려줘"}},
		{"결제 문서를 찾고 그리고 요약을 파일로 저장", []string{"결제 문서를 찾고", "요약을 파일로 저장"}},
		{"ping 8.8.8.8", nil},
		{"", nil},
	}
	for _, c := range cases {
		if got := clauses(c.in); !cmp.Equal(got, c.want) {
			t.Errorf("clauses(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// taskCatalog has seven tools for the first step of the task below, whose names it says,
// and one each for the other two, which it says in other words: ranked as one query, the
// first step's tools take the first five places.
func taskCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := New([]Tool{
		{Name: "web_search", Description: "Search the web for news, images and videos about a topic."},
		{Name: "web_news_search", Description: "Search the web for news about a topic."},
		{Name: "web_image_search", Description: "Search the web for images about a topic."},
		{Name: "web_video_search", Description: "Search the web for videos about a topic."},
		{Name: "news_video_search", Description: "Search news videos about a topic."},
		{Name: "news_image_search", Description: "Search news images about a topic."},
		{Name: "topic_search", Description: "Search the web for a topic."},
		{Name: "save_document", Description: "Save text as a document."},
		{Name: "read_document", Description: "Read a document."},
		{Name: "post_message", Description: "Post a message to a chat channel."},
		{Name: "list_channels", Description: "List the chat channels."},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSearch_TaskReturnsAToolForEachStep(t *testing.T) {
	ix := NewIndex(taskCatalog(t), Options{})
	task := "search the web for news, images and videos about the topic, then write the text to a file and post a message to the channel"
	res := names(ix.Search(task, SearchOptions{}))
	for _, want := range []string{"web_search", "save_document", "post_message"} {
		if !contains(res, want) {
			t.Errorf("%q found %v, want %s among them", task, res, want)
		}
	}
	// The whole query's best still comes first.
	whole := ix.parse(task)
	if first := ix.rank(&whole, 1, 0, false); len(first) == 0 || len(res) == 0 || ix.tool(first[0].doc).Name != res[0] {
		t.Errorf("first result %v, the whole query ranks %v first", res, first)
	}
	// Scores stay on the 0–1 scale.
	for _, r := range ix.Search(task, SearchOptions{TopK: -1, MinScore: -1}) {
		if r.Score <= 0 || r.Score > 1 {
			t.Errorf("%s scored %v", r.Name, r.Score)
		}
	}
	// A query of one step is ranked as before: interleaving is only for tasks.
	short := "search the web for news, images and videos about the topic"
	q := ix.parse(short)
	var want []string
	for _, h := range ix.rank(&q, 5, 0, false) {
		want = append(want, ix.tool(h.doc).Name)
	}
	if got := names(ix.Search(short, SearchOptions{MinScore: -1})); !cmp.Equal(got, want[:min(5, len(want))]) {
		t.Errorf("%q = %v, ranked %v", short, got, want)
	}
}

// A filter hides tools from every clause's ranking, and TopK still fills.
func TestSearch_TaskHonoursFilterAndTopK(t *testing.T) {
	ix := NewIndex(taskCatalog(t), Options{})
	task := "search the web for news, images and videos about the topic, then write the text to a file and post a message to the channel"
	res := ix.Search(task, SearchOptions{TopK: 3, Filter: func(t *Tool) bool { return t.Name != "save_document" }})
	if len(res) != 3 {
		t.Fatalf("TopK 3 gave %v", res)
	}
	for _, r := range res {
		if r.Name == "save_document" {
			t.Errorf("filtered tool returned: %v", res)
		}
	}
}
