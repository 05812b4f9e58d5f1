//go:build llamacpp

package embedded

import (
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// The window reported is the one the engine holds a request to: a prompt of NumCtx
// tokens is refused.
func TestContextTokens_IsTheSlotsContext(t *testing.T) {
	b := newBackend(t, Options{NumCtx: 64})
	if n, err := b.ContextTokens(t.Context()); n != 64 || err != nil {
		t.Fatalf("NumCtx 64: %d, %v", n, err)
	}
	long := strings.Repeat("word ", 200)
	_, err := b.ChatCompletion(t.Context(), &backends.Request{Body: chatBody(t, map[string]any{
		"max_tokens": 1, "messages": []map[string]any{{"role": "user", "content": long}}})})
	if err == nil || !strings.Contains(err.Error(), "context is 64") {
		t.Errorf("a prompt past the window: %v", err)
	}
}
