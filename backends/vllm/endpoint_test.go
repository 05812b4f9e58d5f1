package vllm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// TestPassEndpoint_SaltsCompletionsOnly: an isolated caller's legacy completion carries
// its cache_salt, as its chat does; an embeddings request goes as it came.
func TestPassEndpoint_SaltsCompletionsOnly(t *testing.T) {
	var path string
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(up.Close)
	b, err := New(openaicompat.Options{Name: "vllm", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ endpoint, body, want string }{
		{backends.EndpointCompletions, `{"model":"m","prompt":"a","cache_salt":"client's"}`, `{"model":"m","prompt":"a","cache_salt":"s1"}`},
		{backends.EndpointEmbeddings, `{"model":"m","input":"a"}`, `{"model":"m","input":"a"}`},
		{backends.EndpointScore, `{"model":"m","text_1":"a","text_2":"b"}`, `{"model":"m","text_1":"a","text_2":"b"}`},
	} {
		if !b.PassesEndpoint(c.endpoint) {
			t.Errorf("vLLM does not pass %s", c.endpoint)
		}
		if _, err := b.PassEndpoint(context.Background(), c.endpoint, &backends.Request{Body: []byte(c.body), Model: "m", CacheSalt: "s1"}); err != nil {
			t.Fatal(err)
		}
		if path != "/v1/"+c.endpoint || string(got) != c.want {
			t.Errorf("%s: upstream got %s %s, want %s", c.endpoint, path, got, c.want)
		}
	}
}
