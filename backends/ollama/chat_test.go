package ollama

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
)

// TestChat_LongLinesGrowTheBuffer: a line far longer than the reader's buffer (1 MiB of
// content) arrives whole; one over the api client's 8 MB cap fails as too large instead
// of ending the answer early.
func TestChat_LongLinesGrowTheBuffer(t *testing.T) {
	long := strings.Repeat("é", 512<<10) // 1 MiB of UTF-8
	f := newFake(t, ndjson(
		`{"model":"qwen","message":{"role":"assistant","content":"`+long+`"},"done":false}`,
		`{"model":"qwen","message":{"role":"assistant","content":"!"},"done":true,"done_reason":"stop"}`))
	b := newBackend(t, f.URL, Options{})
	var got strings.Builder
	err := b.chat.Chat(context.Background(), &api.ChatRequest{Model: "qwen"}, func(r api.ChatResponse) error {
		got.WriteString(r.Message.Content)
		return nil
	})
	if err != nil || got.String() != long+"!" {
		t.Fatalf("err %v, content %d bytes, want %d", err, got.Len(), len(long)+1)
	}

	huge := newFake(t, ndjson(`{"model":"qwen","message":{"role":"assistant","content":"`+strings.Repeat("x", maxLine)+`"},"done":true}`))
	b = newBackend(t, huge.URL, Options{})
	err = b.chat.Chat(context.Background(), &api.ChatRequest{Model: "qwen"}, func(api.ChatResponse) error { return nil })
	var be *backends.Error
	if !errors.As(err, &be) || be.Code != backends.CodeTooLarge {
		t.Fatalf("a line over %d bytes: %v, want %s", maxLine, err, backends.CodeTooLarge)
	}
}

// BenchmarkChat_Memory: bytes per answer of five short lines, through the api client
// (which allocates an 8 MB scanner buffer per call) and through this package's reader.
func BenchmarkChat_Memory(b *testing.B) {
	lines := []string{}
	for range 4 {
		lines = append(lines, `{"model":"qwen","message":{"role":"assistant","content":"token"},"done":false}`)
	}
	lines = append(lines, `{"model":"qwen","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`)
	f := httptest.NewServer(ndjson(lines...))
	defer f.Close()
	be, err := New(Options{Name: "bench", BaseURL: f.URL})
	if err != nil {
		b.Fatal(err)
	}
	base, _ := url.Parse(f.URL)
	apiClient := api.NewClient(base, be.chat.hc)
	req := &api.ChatRequest{Model: "qwen"}
	for _, c := range []struct {
		name string
		chat func(context.Context, *api.ChatRequest, api.ChatResponseFunc) error
	}{{"api-client", apiClient.Chat}, {"ours", be.chat.Chat}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.chat(context.Background(), req, func(api.ChatResponse) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
