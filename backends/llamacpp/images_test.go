package llamacpp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// imageChat is a two-turn chat whose first turn carries an image as a data: URL and one
// by http URL.
const imageChat = `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]},{"role":"assistant","content":"a letter"},{"role":"user","content":"and now?"}]}`

// TestImages_Vision: a llama-server whose /props says vision (a stand-in: the tiny test
// model has no projector) gets the data: URL image as its media marker in the template's
// messages and its base64 as the prompt's multimodal_data; the URL it cannot be sent
// becomes a note, which Notes reports.
func TestImages_Vision(t *testing.T) {
	f := newFake(t, "fine")
	f.props = `{"modalities":{"vision":true,"audio":false},"media_marker":"<__media_X__>"}`
	f.prompt = "<|im_start|>user\nwhat is this?<__media_X__>[image omitted]<|im_end|>\n"
	b := newTestBackend(t, f.URL, nil)
	notes := b.Notes(context.Background(), []byte(imageChat))
	if len(notes) != 1 || notes[0] != "messages[0].content[2]: image omitted: the gateway does not fetch image URLs; send the image as a data: URL" {
		t.Fatalf("notes %q", notes)
	}
	for _, stream := range []bool{false, true} {
		body := imageChat
		if stream {
			body = strings.Replace(body, `"model":"m"`, `"model":"m","stream":true`, 1)
		}
		resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "m", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		var tmpl struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(f.last("/apply-template"), &tmpl); err != nil {
			t.Fatal(err)
		}
		want := `[{"type":"text","text":"what is this?"},{"type":"text","text":"<__media_X__>"},{"type":"text","text":"[image omitted: the gateway does not fetch image URLs; send the image as a data: URL]"}]`
		if got := string(tmpl.Messages[0].Content); got != want {
			t.Errorf("stream %v: template content\n got %s\nwant %s", stream, got, want)
		}
		var comp struct {
			Prompt struct {
				PromptString   string   `json:"prompt_string"`
				MultimodalData []string `json:"multimodal_data"`
			} `json:"prompt"`
			Stream bool `json:"stream"`
		}
		if err := json.Unmarshal(f.last("/completion"), &comp); err != nil {
			t.Fatalf("stream %v: /completion body %s: %v", stream, f.last("/completion"), err)
		}
		if comp.Prompt.PromptString != f.prompt || len(comp.Prompt.MultimodalData) != 1 || comp.Prompt.MultimodalData[0] != "QUJD" || comp.Stream != stream {
			t.Errorf("stream %v: /completion body %s", stream, f.last("/completion"))
		}
	}
	if n := len(f.bodies["/props"]); n != 1 {
		t.Errorf("/props asked %d times, want once (kept for %v)", n, propsTTL)
	}
}

// TestImages_CannotSee: where /props says no vision, or fails, every image is a note in
// the template's messages, the prompt stays a string, and a request without images
// never asks /props.
func TestImages_CannotSee(t *testing.T) {
	for _, props := range []string{`{"modalities":{"vision":false},"media_marker":"<__media_X__>"}`, `not json`} {
		f := newFake(t, "fine")
		f.props = props
		b := newTestBackend(t, f.URL, nil)
		if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), Model: "m"}); err != nil {
			t.Fatal(err)
		}
		if n := len(f.bodies["/props"]); n != 0 {
			t.Errorf("a request without images asked /props %d times", n)
		}
		if _, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(imageChat), Model: "m"}); err != nil {
			t.Fatal(err)
		}
		tmpl := string(f.last("/apply-template"))
		if strings.Contains(tmpl, "QUJD") || strings.Count(tmpl, "[image omitted: this model cannot read images]") != 2 {
			t.Errorf("props %s: template body %s", props, tmpl)
		}
		var comp struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(f.last("/completion"), &comp); err != nil || comp.Prompt != testPrompt {
			t.Errorf("props %s: /completion body %s: %v", props, f.last("/completion"), err)
		}
		if notes := b.Notes(context.Background(), []byte(imageChat)); len(notes) != 2 {
			t.Errorf("notes %q, want both images", notes)
		}
	}
}
