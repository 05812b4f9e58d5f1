package gateway

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/maskgate/maskgate/backends"
)

// noteContent sets, before anything is written, a warning for each thing of body that
// be (a backends.ContentNoter) will leave out of the conversation with a note in its
// place: an image the engine cannot read.
func noteContent(ctx context.Context, w http.ResponseWriter, log *slog.Logger, door string, be backends.Backend, body []byte) {
	if n, ok := be.(backends.ContentNoter); ok {
		warn(log, w, door, n.Notes(ctx, body))
	}
}
