//go:build llamacpp

package embedded

import (
	"context"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// TestImages_Notes: the embedded engine reads no images; a two-turn chat whose first
// turn carries one (a data: URL) renders with the note in the image's place, never its
// base64, and both turns generate; Notes names the image. Before, the image was
// dropped silently: nothing in its place, no warning.
func TestImages_Notes(t *testing.T) {
	b := newBackend(t, Options{})
	const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	first := `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + data + `"}}]}`
	for turn, body := range []string{
		`{"model":"tiny","max_tokens":3,"messages":[` + first + `]}`,
		`{"model":"tiny","max_tokens":3,"messages":[` + first + `,{"role":"assistant","content":"a dot"},{"role":"user","content":"and its color?"}]}`,
	} {
		req := &backends.Request{Body: []byte(body), Model: "tiny"}
		prompt, err := b.Prompt(req)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		if strings.Count(prompt, "[image omitted: this model cannot read images]") != 1 || strings.Contains(prompt, data[:40]) {
			t.Errorf("turn %d: prompt %q", turn+1, prompt)
		}
		if _, err := b.ChatCompletion(context.Background(), req); err != nil {
			t.Errorf("turn %d: %v", turn+1, err)
		}
		notes := b.Notes(context.Background(), req.Body)
		if len(notes) != 1 || notes[0] != "messages[0].content[1]: image omitted: this model cannot read images" {
			t.Errorf("turn %d: notes %q", turn+1, notes)
		}
	}
}
