package replicas

import (
	"context"
	"errors"
	"fmt"
)

// ContextTokens is the smallest context window per request of the replicas that can say
// theirs (llama-server's GET /props, the embedded engine's num_ctx): a request may reach
// any of them. It fails when none answers, or none can say.
func (b *Backend) ContextTokens(ctx context.Context) (int, error) {
	n := 0
	var errs []error
	for _, r := range b.opt.Replicas {
		c, ok := r.Backend.(interface {
			ContextTokens(context.Context) (int, error)
		})
		if !ok {
			continue
		}
		w, err := c.ContextTokens(ctx)
		if err != nil || w <= 0 {
			errs = append(errs, fmt.Errorf("replica %s: %d tokens, %w", r.ID, w, err))
			continue
		}
		if n == 0 || w < n {
			n = w
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no replica said its context window: %w", b.opt.Name, errors.Join(errs...))
	}
	return n, nil
}
