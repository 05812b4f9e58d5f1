package replicas

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// TestPassEndpoint_FailsOverLikeAChat: an embeddings request whose home replica is down
// goes to the next one, as a chat would, with its bytes as they were.
func TestPassEndpoint_FailsOverLikeAChat(t *testing.T) {
	var got []byte
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"usage":{"prompt_tokens":1,"total_tokens":1}}`)
	}))
	t.Cleanup(live.Close)
	b := newReplicas(t, Options{}, deadURL(t), live.URL)
	if !b.PassesEndpoint(backends.EndpointEmbeddings) {
		t.Fatal("two OpenAI-compatible replicas do not pass embeddings")
	}
	body := `{"model":"m", "input":["a"]}`
	resp, err := b.PassEndpoint(context.Background(), backends.EndpointEmbeddings,
		&backends.Request{Body: []byte(body), Model: "m", Prefix: prefixHomedOn(t, b, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body || resp.Header.Get(HeaderReplica) != "1" || resp.Body == nil {
		t.Errorf("replica %q got %s, answered %s", resp.Header.Get(HeaderReplica), got, resp.Body)
	}
}

func TestPassesEndpoint_OnlyWhenEveryReplicaDoes(t *testing.T) {
	b := newReplicas(t, Options{}, deadURL(t))
	b.opt.Replicas = append(b.opt.Replicas, Replica{ID: "fake", Backend: fake{}})
	if b.PassesEndpoint(backends.EndpointEmbeddings) {
		t.Error("a replica that passes no endpoint: the pool says it passes embeddings")
	}
}
