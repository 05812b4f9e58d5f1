//go:build llamacpp

package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestRun_ModelFlagServesAGGUFWithCachedTokensOnTheSecondTurn is the README's embedded
// command end to end: -model FILE.gguf, a chat completion with tools, and the second turn
// of the conversation reporting the engine's own cached-token count.
func TestRun_ModelFlagServesAGGUFWithCachedTokensOnTheSecondTurn(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = t.TempDir()
	}
	model := enginetest.TinyModelFile(t, filepath.Join(dir, "maskgate", "models"), tinymodel.Options{})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-model", model, "-listen", addr}, func(string) string { return "" }, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ask := func(messages string) (http.Header, map[string]any) {
		body := `{"model":"demo","max_tokens":8,"seed":1,"messages":` + messages +
			`,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, raw)
		}
		var out map[string]any
		json.Unmarshal(raw, &out)
		return resp.Header, out
	}
	first := `[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Paris?"}]`
	ask(first)
	h, out := ask(strings.TrimSuffix(first, "]") + `,{"role":"assistant","content":"Sunny."},{"role":"user","content":"And Rome?"}]`)
	usage := out["usage"].(map[string]any)
	cached := usage["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	if h.Get("X-Maskgate-Cache") != "reported" || cached < 20 {
		t.Errorf("second turn: cache %q, %v cached of %v prompt tokens", h.Get("X-Maskgate-Cache"), cached, usage["prompt_tokens"])
	}
	cancel()
	<-done
}
