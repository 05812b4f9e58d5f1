package ollama

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// imageChat is a two-turn chat whose first turn carries a data: URL image and one by URL.
const imageChat = `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]},{"role":"assistant","content":"a letter"},{"role":"user","content":"and now?"}]}`

// visionFake is fakeOllama whose POST /api/show lists caps and counts its calls.
func visionFake(t *testing.T, caps string) (*fakeOllama, *int) {
	shows := new(int)
	f := newFake(t, ndjson(`{"model":"m","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":1}`))
	mux := f.Config.Handler.(*http.ServeMux)
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		*shows++
		io.WriteString(w, `{"capabilities":`+caps+`}`)
	})
	return f, shows
}

func sentMessages(t *testing.T, f *fakeOllama) []struct {
	Content string   `json:"content"`
	Images  []string `json:"images"`
} {
	t.Helper()
	var body struct {
		Messages []struct {
			Content string   `json:"content"`
			Images  []string `json:"images"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(f.lastBody(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

// TestImages_VisionModel: a model whose /api/show lists vision gets the data: URL image
// as its message's images (base64 in Ollama's JSON), the text without it; the URL the
// gateway does not fetch is a note, which Notes reports. /api/show is asked once.
func TestImages_VisionModel(t *testing.T) {
	f, shows := visionFake(t, `["completion","vision"]`)
	b := newBackend(t, f.URL, Options{})
	if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(imageChat), Model: "m"}); err != nil {
		t.Fatal(err)
	}
	msgs := sentMessages(t, f)
	want := "what is this?[image omitted: the gateway does not fetch image URLs; send the image as a data: URL]"
	if len(msgs) != 3 || msgs[0].Content != want || len(msgs[0].Images) != 1 || msgs[0].Images[0] != "QUJD" || len(msgs[2].Images) != 0 {
		t.Errorf("messages sent %+v, want the first %q with images [QUJD]", msgs, want)
	}
	notes := b.Notes(context.Background(), []byte(imageChat))
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "messages[0].content[2]: image omitted: the gateway does not fetch") {
		t.Errorf("notes %q", notes)
	}
	if *shows != 1 {
		t.Errorf("/api/show asked %d times, want once", *shows)
	}
}

// TestImages_TextOnlyModel: a model without vision gets a note for each image and no
// images; a request without images never asks /api/show.
func TestImages_TextOnlyModel(t *testing.T) {
	f, shows := visionFake(t, `["completion","tools"]`)
	b := newBackend(t, f.URL, Options{})
	if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if *shows != 0 {
		t.Errorf("a request without images asked /api/show %d times", *shows)
	}
	if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(imageChat), Model: "m"}); err != nil {
		t.Fatal(err)
	}
	msgs := sentMessages(t, f)
	note := "[image omitted: this model cannot read images]"
	if len(msgs) != 3 || msgs[0].Content != "what is this?"+note+note || len(msgs[0].Images) != 0 {
		t.Errorf("messages sent %+v", msgs)
	}
	if notes := b.Notes(context.Background(), []byte(imageChat)); len(notes) != 2 {
		t.Errorf("notes %q, want both images", notes)
	}
}
