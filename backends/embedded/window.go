//go:build llamacpp

package embedded

import "context"

// ContextTokens is the context window one request gets: a slot's NumCtx, which its
// prompt and answer together must fit. The auto strategy holds its sessions to it.
func (b *Backend) ContextTokens(context.Context) (int, error) { return b.opt.NumCtx, nil }
