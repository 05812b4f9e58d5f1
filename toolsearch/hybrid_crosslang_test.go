package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// crossLangEmbeddings serves /v1/embeddings as a multilingual model would, with vectors
// the test controls: a text's vector is the axis of the first meaning whose words it has,
// in any language, or a vector of its own meaning nothing.
func crossLangEmbeddings(t *testing.T, meanings [][]string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embedRequest
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var data []string
		for i, text := range req.Input {
			v := make([]string, len(meanings)+1)
			for k := range v {
				v[k] = "0"
			}
			v[len(meanings)] = "1"
		find:
			for k, words := range meanings {
				for _, word := range words {
					if strings.Contains(strings.ToLower(text), word) {
						v[len(meanings)] = "0.05"
						v[k] = "1"
						break find
					}
				}
			}
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s]}`, i, strings.Join(v, ",")))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"m"}`, strings.Join(data, ","))
	}))
}

// A Korean query for a tool described in English has no word in common with it: only the
// hybrid path, through the embeddings, finds it, fused with a lexical ranking that still
// finds the Korean-described tool the query's words match.
func TestHybrid_KoreanQueryFindsEnglishToolThroughEmbeddings(t *testing.T) {
	srv := crossLangEmbeddings(t, [][]string{
		{"weather", "날씨", "天气"},
		{"payment", "결제", "支付"},
		{"chart", "차트", "图表"},
	})
	defer srv.Close()
	c, err := New([]Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city."},
		{Name: "create_chart", Description: "Draw a chart from data."},
		{Name: "toss_docs", Description: "토스페이먼츠 결제 연동 문서를 조회합니다."},
		{Name: "send_email", Description: "Send an email."},
	})
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(c, Options{})
	e := &OpenAIEmbedder{BaseURL: srv.URL + "/v1", Model: "m", Transport: srv.Client().Transport}
	h, err := NewHybrid(context.Background(), ix, e, HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := "서울 날씨 알려줘" // "tell me the weather in Seoul"
	if got := names(ix.Search(q, SearchOptions{TopK: -1, MinScore: -1})); contains(got, "get_weather") {
		t.Fatalf("lexical search found get_weather for %q: %v", q, got)
	}
	got, err := h.Search(context.Background(), q, SearchOptions{})
	if err != nil || len(got) == 0 || got[0].Name != "get_weather" {
		t.Fatalf("hybrid %q = %v, %v; want get_weather first", q, got, err)
	}
	// First in the semantic ranking only: 1/(60+1) of the 2/(60+1) of first in both.
	if got[0].Score != 0.5 {
		t.Errorf("get_weather scored %v, want 0.5", got[0].Score)
	}
	// A query whose words and meaning agree is first in both rankings and scores 1.
	got, err = h.Search(context.Background(), "결제 연동 문서", SearchOptions{})
	if err != nil || len(got) == 0 || got[0].Name != "toss_docs" || got[0].Score != 1 {
		t.Errorf("hybrid = %v, %v; want toss_docs first, scored 1", got, err)
	}
}
