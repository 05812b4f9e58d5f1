//go:build llamacpp

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
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

	// The file is listed under its base name, and the start log says so.
	name := strings.TrimSuffix(filepath.Base(model), ".gguf")
	if got := listModels(t, "http://"+addr); len(got) != 1 || got[0] != name {
		t.Errorf("/v1/models lists %q, want [%q]", got, name)
	}
	if !strings.Contains(stderr.String(), "model="+name) {
		t.Errorf("the start log does not name the model %q:\n%s", name, stderr.String())
	}
	cancel()
	<-done
}

// listModels returns the ids GET /v1/models lists.
func listModels(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/v1/models: status %d, %v", resp.StatusCode, err)
	}
	ids := []string{}
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestFindBackends_DemoModelIsListedAsMaskgateDemo: with no config and no engine on the
// default ports, a llamacpp build serves the random-weight demo model, lists it in
// /v1/models as maskgate-demo, logs that name, echoes it in answers, and, holding one
// model, answers any other name with it too (documented in the README and the command's
// doc comment).
func TestFindBackends_DemoModelIsListedAsMaskgateDemo(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	nowhere := []engineAddr{{"llamacpp", "http://127.0.0.1:1", "http://127.0.0.1:1/v1"}}
	found := findBackends(t.Context(), nowhere, false, http.DefaultTransport, log)
	if len(found) != 1 || found[0].Kind != "embedded" {
		t.Fatalf("found %+v, want the embedded demo\n%s", found, logs.String())
	}
	if !strings.Contains(logs.String(), "model=maskgate-demo") || !strings.Contains(logs.String(), "RANDOM-WEIGHT") {
		t.Errorf("the log does not name the demo model:\n%s", logs.String())
	}
	ups, err := buildUpstreams(&config.Config{Backends: found}, http.DefaultTransport, func(string) string { return "" }, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Options{Upstreams: ups, Logger: log}))
	defer srv.Close()
	if got := listModels(t, srv.URL); len(got) != 1 || got[0] != "maskgate-demo" {
		t.Errorf("/v1/models lists %q, want [maskgate-demo]", got)
	}
	for _, model := range []string{"maskgate-demo", "gpt-4o"} {
		body := `{"model":"` + model + `","max_tokens":4,"seed":1,"messages":[{"role":"user","content":"Hello"}]}`
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out struct {
			Model   string `json:"model"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(raw, &out) != nil || out.Model != model || len(out.Choices) != 1 {
			t.Errorf("model %q: status %d, body %s", model, resp.StatusCode, raw)
		}
	}
}

// TestFindBackends_NothingToRouteToWithAConfig: a config file that names no backend gets
// no demo (the demo is for a bare start), and the warning says what would serve.
func TestFindBackends_NothingToRouteToWithAConfig(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	nowhere := []engineAddr{{"llamacpp", "http://127.0.0.1:1", "http://127.0.0.1:1/v1"}}
	if found := findBackends(t.Context(), nowhere, true, http.DefaultTransport, log); len(found) != 0 {
		t.Fatalf("found %+v", found)
	}
	if !strings.Contains(logs.String(), "gateway -config FILE") || !strings.Contains(logs.String(), "-model FILE.gguf") {
		t.Errorf("log:\n%s", logs.String())
	}
}
