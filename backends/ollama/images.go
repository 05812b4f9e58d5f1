package ollama

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
)

var _ backends.ContentNoter = (*Backend)(nil)

// imageMarker stands, inside a message's text between Rewrite and attachImages, for an
// image Ollama is given as the message's images: private-use characters no client text
// holds.
const imageMarker = "\ue000maskgate-image\ue000"

// visionTTL is how long what POST /api/show said of a model's capabilities is kept.
const visionTTL = 30 * time.Second

// visionCache keeps, per model, whether it reads images.
type visionCache struct {
	mu sync.Mutex
	m  map[string]visionEntry
}

type visionEntry struct {
	sees bool
	at   time.Time
}

// sees says whether the model reads images: POST /api/show lists "vision" among its
// capabilities. A model Ollama cannot show is taken as one that cannot see.
func (b *Backend) sees(ctx context.Context, name string) bool {
	c := &b.vision
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[name]; ok && time.Since(e.at) < visionTTL {
		return e.sees
	}
	show, err := b.client.Show(ctx, &api.ShowRequest{Model: name})
	if err != nil {
		return false
	}
	if c.m == nil {
		c.m = map[string]visionEntry{}
	}
	e := visionEntry{sees: slices.Contains(show.Capabilities, model.CapabilityVision), at: time.Now()}
	c.m[name] = e
	return e.sees
}

// images rewrites the messages of body as the model can take them (chatlayer.Rewrite):
// for a model that reads images, each data: URL image a marker in its message's text,
// its data returned in order for attachImages; every other image a note. A body without
// images is returned as it is, and Ollama is not asked.
func (b *Backend) images(ctx context.Context, body []byte, name string) ([]byte, *chatlayer.Images) {
	msgs, ok := oai.Get(body, "messages")
	if !ok || !chatlayer.HasImages(msgs) {
		return body, nil
	}
	if name == "" {
		m, _ := oai.Get(body, "model")
		name = strings.Trim(string(m), `"`)
	}
	img, err := chatlayer.Rewrite(msgs, chatlayer.Media{Sees: b.sees(ctx, name), Marker: imageMarker})
	if err != nil || len(img.Notes) == 0 && len(img.Data) == 0 {
		return body, nil // a malformed body is refused by translateRequest
	}
	out, err := oai.Set(body, "messages", img.Messages)
	if err != nil {
		return body, nil
	}
	return out, img
}

// Notes says which images of body the model will not be given (backends.ContentNoter):
// all of them where it cannot see, those by URL or with bad data where it can.
func (b *Backend) Notes(ctx context.Context, body []byte) []string {
	if _, img := b.images(ctx, body, ""); img != nil {
		return img.Notes
	}
	return nil
}

// attachImages moves the images the markers of msgs stand for into each message's
// images (Ollama's "images": base64 in its JSON), in order, and takes the markers out
// of the text.
func attachImages(msgs []api.Message, data []string) error {
	for i := range msgs {
		n := strings.Count(msgs[i].Content, imageMarker)
		if n == 0 {
			continue
		}
		if n > len(data) {
			return backends.BadRequest(fmt.Sprintf("messages[%d].content", i), "the message's text holds the gateway's image marker")
		}
		for _, d := range data[:n] {
			raw, err := base64.StdEncoding.DecodeString(d)
			if err != nil {
				return err
			}
			msgs[i].Images = append(msgs[i].Images, api.ImageData(raw))
		}
		data = data[n:]
		msgs[i].Content = strings.ReplaceAll(msgs[i].Content, imageMarker, "")
	}
	return nil
}
