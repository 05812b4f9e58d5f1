//go:build llamacpp

package embedded

import (
	"context"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
)

var _ backends.ContentNoter = (*Backend)(nil)

// The embedded engine loads no multimodal projector: it reads no images. Each image
// part becomes a note in the prompt (chatlayer.Rewrite) and a warning, where the
// template's text content dropped it silently.

// Notes says which images of body the engine will not be given: all of them.
func (b *Backend) Notes(_ context.Context, body []byte) []string {
	msgs, ok := oai.Get(body, "messages")
	if !ok || !chatlayer.HasImages(msgs) {
		return nil
	}
	img, err := chatlayer.Rewrite(msgs, chatlayer.Media{})
	if err != nil {
		return nil // the request fails on its own
	}
	return img.Notes
}

// withoutImages is body with each image part of its messages a note.
func withoutImages(body []byte) []byte {
	msgs, ok := oai.Get(body, "messages")
	if !ok || !chatlayer.HasImages(msgs) {
		return body
	}
	img, err := chatlayer.Rewrite(msgs, chatlayer.Media{})
	if err != nil || len(img.Notes) == 0 {
		return body // a malformed body fails to parse on its own
	}
	out, err := oai.Set(body, "messages", img.Messages)
	if err != nil {
		return body
	}
	return out
}
