package replicas

import (
	"context"

	"github.com/maskgate/maskgate/backends"
)

var _ backends.ContentNoter = (*Backend)(nil)

// Notes is the first replica's that can say what it leaves out (backends.ContentNoter):
// the replicas serve one model, so what one cannot take (an image, for a model that
// cannot see) none can. nil when no replica says.
func (b *Backend) Notes(ctx context.Context, body []byte) []string {
	for _, r := range b.opt.Replicas {
		if n, ok := r.Backend.(backends.ContentNoter); ok {
			return n.Notes(ctx, body)
		}
	}
	return nil
}
