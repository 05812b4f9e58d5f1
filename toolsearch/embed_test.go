package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeEmbeddings serves /v1/embeddings: the vector of a text is [len(text), i, 1], sent in
// reverse order so the client must sort by index.
func fakeEmbeddings(t *testing.T, calls *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer k" {
			t.Errorf("Authorization = %q", got)
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
			t.Errorf("request %+v, %v", req, err)
		}
		if req.Input[0] == "fail" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"input too long","type":"invalid_request_error"}}`)
			return
		}
		var data []string
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,%d,1]}`, i, len(req.Input[i]), i))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"m"}`, strings.Join(data, ","))
	}))
}

func TestOpenAIEmbedder_BatchesAndKeepsOrder(t *testing.T) {
	var calls atomic.Int32
	srv := fakeEmbeddings(t, &calls)
	defer srv.Close()
	e := &OpenAIEmbedder{BaseURL: srv.URL + "/v1/", Model: "m", APIKey: "k", Transport: srv.Client().Transport, BatchSize: 2}
	got, err := e.Embed(context.Background(), []string{"a", "bb", "ccc", "dddd", "eeeee"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{1, 0, 1}, {2, 1, 1}, {3, 0, 1}, {4, 1, 1}, {5, 0, 1}}
	if !cmp.Equal(got, want) {
		t.Errorf("vectors = %v, want %v", got, want)
	}
	if calls.Load() != 3 {
		t.Errorf("%d requests, want 3 batches", calls.Load())
	}
}

func TestOpenAIEmbedder_ErrorsSayWhatFailed(t *testing.T) {
	var calls atomic.Int32
	srv := fakeEmbeddings(t, &calls)
	defer srv.Close()
	e := &OpenAIEmbedder{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k", Transport: srv.Client().Transport}
	if _, err := e.Embed(context.Background(), []string{"fail"}); err == nil || !strings.Contains(err.Error(), "400 Bad Request: input too long") {
		t.Errorf("err = %v", err)
	}
	e.BaseURL = srv.URL
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v", err)
	}
	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1]}]}`)
	}))
	defer short.Close()
	e = &OpenAIEmbedder{BaseURL: short.URL, Transport: short.Client().Transport}
	if _, err := e.Embed(context.Background(), []string{"x", "y"}); err == nil || !strings.Contains(err.Error(), "1 vectors for 2 texts") {
		t.Errorf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&OpenAIEmbedder{BaseURL: srv.URL, Transport: srv.Client().Transport}).Embed(ctx, []string{"x"}); err == nil {
		t.Error("a cancelled context did not fail")
	}
}
