package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
)

var _ backends.ContentNoter = (*Backend)(nil)

// propsTTL is how long what GET /props said of the engine's modalities is kept: a
// llama-server restarted with another model (or projector) is seen within it.
const propsTTL = 30 * time.Second

// mediaCache keeps what GET /props said of the engine's modalities. Only a request that
// carries an image asks.
type mediaCache struct {
	mu    sync.Mutex
	at    time.Time
	media chatlayer.Media
}

// media says whether llama-server reads images and, if so, its media marker: GET /props,
// modalities.vision and media_marker (tools/server/README.md, "GET /props"; a server
// without a multimodal projector says vision false). A server whose /props fails or
// names no modalities is taken as one that cannot see: its images become notes rather
// than a refusal that every later turn would repeat.
func (b *Backend) media(ctx context.Context) chatlayer.Media {
	c := &b.mediaCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < propsTTL {
		return c.media
	}
	raw, err := b.get(ctx, "/props")
	if err != nil {
		return chatlayer.Media{}
	}
	var props struct {
		Modalities struct {
			Vision bool `json:"vision"`
		} `json:"modalities"`
		MediaMarker string `json:"media_marker"`
	}
	if json.Unmarshal(raw, &props) != nil {
		return chatlayer.Media{}
	}
	c.media = chatlayer.Media{Sees: props.Modalities.Vision, Marker: props.MediaMarker}
	c.at = time.Now()
	return c.media
}

// Notes says which images of body the engine will not be given (backends.ContentNoter):
// all of them where it cannot see, those by URL or with bad data where it can; and that
// its late system messages will be merged, where the template refuses them.
func (b *Backend) Notes(ctx context.Context, body []byte) []string {
	late := b.systemNote(ctx, body) // systemmerge.go
	msgs, ok := oai.Get(body, "messages")
	if !ok || !chatlayer.HasImages(msgs) {
		return late
	}
	img, err := chatlayer.Rewrite(msgs, b.media(ctx))
	if err != nil {
		return late // the request fails on its own
	}
	return append(img.Notes, late...)
}

// images rewrites the messages of tmpl, an /apply-template body, as the engine can take
// them (chatlayer.Rewrite): each image a text part holding the media marker, whose data
// goes with the prompt (withMedia), or a note. llama-server's own chat layer does the
// same with the images it is sent (a marker in the image part's place), so the template
// renders what it would have.
func (b *Backend) images(ctx context.Context, tmpl []byte) ([]byte, []string, error) {
	msgs, ok := oai.Get(tmpl, "messages")
	if !ok || !chatlayer.HasImages(msgs) {
		return tmpl, nil, nil
	}
	img, err := chatlayer.Rewrite(msgs, b.media(ctx))
	if err != nil {
		return nil, nil, backends.BadRequest("messages", "messages is not a JSON array: %v", err)
	}
	if len(img.Notes) == 0 && len(img.Data) == 0 {
		return tmpl, nil, nil
	}
	out, err := oai.Set(tmpl, "messages", img.Messages)
	return out, img.Data, err
}

// withMedia makes the prompt of a /completion body the multimodal form llama-server
// reads (tools/server/README.md, "POST /completion": {"prompt_string": ...,
// "multimodal_data": [base64, ...]}, one datum per media marker in the prompt, in order).
func withMedia(body []byte, prompt string, data []string) ([]byte, error) {
	if len(data) == 0 {
		return body, nil
	}
	p, err := marshalNoEscape(struct {
		PromptString   string   `json:"prompt_string"`
		MultimodalData []string `json:"multimodal_data"`
	}{prompt, data})
	if err != nil {
		return nil, err
	}
	return oai.Set(body, "prompt", p)
}

// marshalNoEscape is json.Marshal without HTML escaping: the prompt's special tokens and
// media markers read as the template wrote them.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
