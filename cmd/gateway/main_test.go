package main

import (
	"bytes"
	"context"
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

	"github.com/google/go-cmp/cmp"
)

func TestRun_BadConfigExits2NamingFileLineAndKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.yaml")
	os.WriteFile(path, []byte("backends:\n  - name: a\n    kind: vllm\n    models: [m]\n"), 0o644)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-config", path}, func(string) string { return "" }, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	want := path + ":2: backends[0].url: required"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}
}

func TestRun_MissingKeyVariableExits2WithoutLeakingAnything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gw.yaml")
	os.WriteFile(path, []byte("backends:\n  - {name: o, kind: openai, url: 'https://api.openai.com/v1', api_key_env: MY_KEY, models: [gpt]}\n"), 0o644)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-config", path}, func(string) string { return "" }, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "MY_KEY is empty") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestBuildUpstreams_SecretsComeFromTheEnvironment(t *testing.T) {
	var gotAuth string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		io.WriteString(w, `{"object":"list","data":[]}`)
	}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "gw.yaml")
	os.WriteFile(path, []byte("backends:\n  - {name: o, kind: openai, url: '"+up.URL+"/v1', api_key_env: K, models: [m]}\n"), 0o644)
	cfg := mustLoad(t, path)
	ups, err := buildUpstreams(cfg, http.DefaultTransport, func(k string) string { return map[string]string{"K": "sk-secret"}[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ups[0].Backend.(interface {
		ListModels(context.Context) ([]string, error)
	}).ListModels(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer sk-secret" {
		t.Errorf("Authorization %q", gotAuth)
	}
}

func TestDiscover_RoutesWhatEnginesList(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen"}]}`)
	}))
	defer engine.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	found := discover(context.Background(), []engineAddr{
		{"llamacpp", engine.URL, engine.URL + "/v1"},
		{"vllm", "http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1"}, // nothing there
		{"ollama", engine.URL, engine.URL + "/v1"},
	}, http.DefaultTransport, log)
	var got [][]string
	for _, b := range found {
		got = append(got, append([]string{b.Kind}, b.Models...))
	}
	want := [][]string{{"llamacpp", "qwen", "*"}, {"ollama", "qwen"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovered (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "found engine") {
		t.Errorf("log does not say what it found: %s", logs.String())
	}
}

func TestRun_ServesTheExampleConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, []string{"-config", "../../examples/gateway.yaml", "-listen", addr}, func(string) string { return "" }, &stderr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("healthz %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not serve: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/v1/tools/search?q=schedule+a+meeting&k=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"name":"calendar_create_event"`) {
		t.Errorf("the example catalog is not searchable: %s", body)
	}
	if code := run(context.Background(), []string{"-healthcheck", "http://" + addr + "/healthz"}, nil, &stderr); code != 0 {
		t.Errorf("-healthcheck of a serving gateway exits %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after shutdown\n%s", code, stderr.String())
	}
}

func TestRun_BadFilterGlobExits2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gw.yaml")
	os.WriteFile(path, []byte("filters:\n  - {name: f, phases: [search], tools: ['[abc']}\n"), 0o644)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-config", path}, func(string) string { return "" }, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "filters: rules[0].tools[0]") {
		t.Errorf("stderr %q does not name the rule", stderr.String())
	}
}
