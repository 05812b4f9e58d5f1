package llamacpp

import (
	"context"
	"encoding/json"
	"fmt"
)

// ContextTokens asks GET /props for the context window one request gets:
// default_generation_settings.n_ctx, the context of a slot (tools/server/README.md, "GET
// /props"), which --ctx-size sets and --parallel shares between slots. The auto strategy
// holds its sessions to it where the backend's context_window is not configured.
func (b *Backend) ContextTokens(ctx context.Context) (int, error) {
	raw, err := b.get(ctx, "/props")
	if err != nil {
		return 0, err
	}
	var props struct {
		Settings *struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := json.Unmarshal(raw, &props); err != nil || props.Settings == nil || props.Settings.NCtx <= 0 {
		if err == nil {
			err = fmt.Errorf("no positive default_generation_settings.n_ctx in %s", clip(string(raw)))
		}
		return 0, b.badAnswer("/props", err)
	}
	return props.Settings.NCtx, nil
}
