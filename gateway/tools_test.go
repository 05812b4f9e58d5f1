package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

const testCatalog = `[
 {"type":"function","function":{"name":"github_create_issue","description":"Open a new issue in a GitHub repository.","parameters":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"}}}}},
 {"type":"function","function":{"name":"slack_send_message","description":"Post a message to a Slack channel.","parameters":{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}}}}},
 {"type":"function","function":{"name":"calendar_create_event","description":"Schedule a meeting on the calendar.","parameters":{"type":"object","properties":{"title":{"type":"string"},"start":{"type":"string"}}}}}
]`

func catalogGateway(t *testing.T) (*httptest.Server, *toolsearch.Index) {
	t.Helper()
	tools, err := toolsearch.ParseTools([]byte(testCatalog), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	ix := toolsearch.NewIndex(cat, toolsearch.Options{})
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{Tools: ix, Tokens: counter}))
	t.Cleanup(srv.Close)
	return srv, ix
}

func TestTools_ServesTheRenderedCatalogByteForByte(t *testing.T) {
	srv, ix := catalogGateway(t)
	_, first := get(t, srv.URL+"/v1/tools")
	_, second := get(t, srv.URL+"/v1/tools")
	if string(first) != string(second) {
		t.Fatal("two reads of /v1/tools differ")
	}
	var got struct {
		Object  string          `json:"object"`
		Version string          `json:"version"`
		Data    json.RawMessage `json:"data"`
		Tokens  struct {
			Total int            `json:"total"`
			Tools map[string]int `json:"tools"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatalf("%v: %s", err, first)
	}
	cat := ix.Catalog()
	if got.Object != "list" || got.Version != cat.Version() || string(got.Data) != string(cat.Render()) {
		t.Errorf("got %s", first)
	}
	sum := 0
	for _, n := range got.Tokens.Tools {
		if n < 10 {
			t.Errorf("a whole tool definition counted as %d tokens", n)
		}
		sum += n
	}
	// The whole array is its tools plus brackets and commas, give or take merges at the
	// joins.
	if len(got.Tokens.Tools) != 3 || got.Tokens.Total < sum-3 || got.Tokens.Total > sum+6 {
		t.Errorf("tokens %+v: the catalog should count about the sum of its tools (%d)", got.Tokens, sum)
	}
}

func TestToolSearch_ReturnsRankedResults(t *testing.T) {
	srv, _ := catalogGateway(t)
	resp, body := get(t, srv.URL+"/v1/tools/search?q=open+a+ticket+on+github&k=2")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got struct {
		Results []struct {
			Name        string  `json:"name"`
			Description string  `json:"description"`
			Score       float64 `json:"score"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) == 0 || got.Results[0].Name != "github_create_issue" || got.Results[0].Score <= 0 || got.Results[0].Score > 1 {
		t.Errorf("results %s", body)
	}
	if len(got.Results) > 2 {
		t.Errorf("k=2 gave %d results", len(got.Results))
	}
}

func TestToolSearch_BadQueriesAre400(t *testing.T) {
	srv, _ := catalogGateway(t)
	for _, tt := range []struct{ query, param string }{{"", "q"}, {"?q=x&k=0", "k"}, {"?q=x&k=abc", "k"}, {"?q=x&k=1000", "k"}} {
		resp, body := get(t, srv.URL+"/v1/tools/search"+tt.query)
		if resp.StatusCode != 400 {
			t.Errorf("%q: status %d", tt.query, resp.StatusCode)
			continue
		}
		assertEnvelope(t, body, tt.param, "")
	}
}

// conceptEmbedder puts texts about meetings on one axis and everything else on another,
// so a query with no word in common with the calendar tool can still find it.
type conceptEmbedder struct{}

func (conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.Contains(t, "calendar") || strings.Contains(t, "meeting") || strings.Contains(t, "rendezvous") {
			out[i] = []float32{1, 0}
		} else {
			out[i] = []float32{0, 1}
		}
	}
	return out, nil
}

func TestToolSearch_HybridFindsWhatWordsMiss(t *testing.T) {
	_, ix := catalogGateway(t)
	h, err := toolsearch.NewHybrid(context.Background(), ix, conceptEmbedder{}, toolsearch.HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{Tools: ix, Hybrid: h, SearchMinScore: -1}))
	defer srv.Close()
	_, body := get(t, srv.URL+"/v1/tools/search?q=a+rendezvous+please&k=1")
	if !strings.Contains(string(body), `"name":"calendar_create_event"`) {
		t.Errorf("hybrid search missed the calendar tool: %s", body)
	}
	// The control: words alone do not find it.
	lexical := httptest.NewServer(gateway.New(gateway.Options{Tools: ix, SearchMinScore: -1}))
	defer lexical.Close()
	if _, body := get(t, lexical.URL+"/v1/tools/search?q=a+rendezvous+please&k=1"); strings.Contains(string(body), "calendar_create_event") {
		t.Fatalf("lexical search already finds it, so this test proves nothing: %s", body)
	}
}
