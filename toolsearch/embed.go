package toolsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Embedder turns texts into vectors, one per text, in order, all of one length.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// OpenAIEmbedder calls an OpenAI-compatible embeddings endpoint, POST {BaseURL}/embeddings,
// as llama-server (--embeddings), vLLM, Ollama and OpenAI serve it.
type OpenAIEmbedder struct {
	// BaseURL is the OpenAI-SDK base URL, with /v1: "http://127.0.0.1:8080/v1".
	BaseURL string
	// Model is sent as "model".
	Model string
	// APIKey, if non-empty, is sent as a bearer token.
	APIKey string
	// Transport sends the requests. If nil, http.DefaultTransport is used.
	Transport http.RoundTripper
	// BatchSize is the most texts sent in one request; zero means 64.
	BatchSize int
}

// maxEmbedResponse bounds one response: 64 texts of 4096 dimensions as JSON fit easily.
const maxEmbedResponse = 64 << 20

// Embed sends texts in batches of BatchSize, one request at a time, and returns their
// vectors in order.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := e.BatchSize
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		vs, err := e.embed(ctx, texts[i:min(i+batch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	for _, v := range out {
		if len(v) != len(out[0]) {
			return nil, fmt.Errorf("embeddings %s: vectors of %d and %d dimensions", e.Model, len(out[0]), len(v))
		}
	}
	return out, nil
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (e *OpenAIEmbedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	url := strings.TrimRight(e.BaseURL, "/") + "/embeddings"
	body, err := json.Marshal(embedRequest{Model: e.Model, Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	rt := e.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: POST %s: reading the response: %w", url, err)
	}
	if len(raw) > maxEmbedResponse {
		return nil, fmt.Errorf("embeddings: POST %s: response over %d bytes; lower BatchSize", url, maxEmbedResponse)
	}
	var r embedResponse
	jerr := json.Unmarshal(raw, &r)
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(raw[:min(len(raw), 300)]))
		if jerr == nil && r.Error != nil && r.Error.Message != "" {
			msg = r.Error.Message
		}
		return nil, fmt.Errorf("embeddings: POST %s: %s: %s", url, resp.Status, msg)
	}
	if jerr != nil {
		return nil, fmt.Errorf("embeddings: POST %s: %w", url, jerr)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: POST %s: %d vectors for %d texts", url, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: POST %s: bad or repeated index %d", url, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: POST %s: empty vector at index %d", url, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
