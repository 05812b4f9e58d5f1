package gateway

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/maskgate/maskgate/backends"
)

// noteContent tells the client, before anything is written, of each thing of body that
// be (a backends.ContentNoter) will leave out of the conversation with a note in its
// place (an image the engine cannot read): a door whose answer carries warnings itself
// (contentWarner) gets them, every other a warning header each.
func noteContent(ctx context.Context, w http.ResponseWriter, log *slog.Logger, d doorway, be backends.Backend, body []byte) {
	n, ok := be.(backends.ContentNoter)
	if !ok {
		return
	}
	notes := n.Notes(ctx, body)
	if cw, ok := d.(contentWarner); ok {
		cw.addWarnings(notes)
		return
	}
	warn(log, w, d.name(), notes)
}

// contentWarner is a door whose answer carries its warnings itself: the Responses and
// Messages doors set them as headers when their sink begins and list them in the body's
// notice (over a WebSocket, where there are no headers, only there).
type contentWarner interface{ addWarnings([]string) }

func (d *messagesDoor) addWarnings(n []string)  { d.rq.Warnings = append(d.rq.Warnings, n...) }
func (d *responsesDoor) addWarnings(n []string) { d.rq.Warnings = append(d.rq.Warnings, n...) }
