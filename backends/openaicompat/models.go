package openaicompat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// ListModels asks the upstream's GET {base}/models.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	resp, cancel, err := b.up.Open(ctx, "/models", nil, "application/json")
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("backend %q: read model list: %w", b.opt.Name, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// Ping succeeds when the upstream lists its models.
func (b *Backend) Ping(ctx context.Context) error {
	_, err := b.ListModels(ctx)
	return err
}
