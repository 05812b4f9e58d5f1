package openaicompat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// ListModels asks the upstream's GET {base}/models.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/models", nil)
	if err != nil {
		return nil, err
	}
	b.authorize(req)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, b.transportError(ctx, context.Cause(ctx), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, upstreamError(b.opt.Name, resp)
	}
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
