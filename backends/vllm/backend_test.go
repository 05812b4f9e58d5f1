package vllm

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

var update = flag.Bool("update", false, "rewrite golden files")

const request = `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"tools":[` +
	`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
	`{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}],"tool_choice":"required"}`

// TestConstrain_GoldenBody: the request vLLM receives, reviewed against vLLM's
// "Structured Outputs" documentation (structured_outputs.structural_tag holds the tag as
// a JSON string; triggered_tags with one tag per allowed tool; at_least_one for a
// required call).
func TestConstrain_GoldenBody(t *testing.T) {
	got, ok, err := Constrain([]byte(request), []string{"get_weather"})
	if err != nil || !ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	golden := "testdata/required_one_allowed.json"
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("body changed:\n got %s\nwant %s", got, want)
	}
	var body struct {
		ToolChoice        string `json:"tool_choice"`
		StructuredOutputs struct {
			StructuralTag string `json:"structural_tag"`
		} `json:"structured_outputs"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatal(err)
	}
	tag := body.StructuredOutputs.StructuralTag
	if body.ToolChoice != "auto" || len(body.Tools) != 2 || !strings.Contains(tag, `get_weather`) || strings.Contains(tag, `get_time`) ||
		!strings.Contains(tag, `"at_least_one":true`) {
		t.Errorf("tool_choice %q, %d tools, tag %s", body.ToolChoice, len(body.Tools), tag)
	}
	// Every byte before tool_choice is the client's: the prompt does not move.
	prefix := request[:strings.Index(request, `"tool_choice"`)]
	if !strings.HasPrefix(string(got), prefix) {
		t.Error("bytes before tool_choice changed")
	}
}

func TestConstrain_LeavesRequestsWithoutToolsOrWithNoneAlone(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[]}`,
		strings.Replace(request, `"tool_choice":"required"`, `"tool_choice":"none"`, 1),
	} {
		got, ok, err := Constrain([]byte(body), nil)
		if err != nil || ok || string(got) != body {
			t.Errorf("%s: changed (%v %v)", body, ok, err)
		}
	}
	if _, _, err := Constrain([]byte(strings.Replace(request, `"tool_choice":"required"`, `"tool_choice":{"type":"function","function":{"name":"nope"}}`, 1)), nil); err == nil {
		t.Error("a named tool that is not in the request was accepted")
	}
}

func TestBackend_ForwardsTheConstrainedBodyAndSaysMask(t *testing.T) {
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()
	b, err := New(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(request), Allowed: []string{"get_time"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "mask" || !strings.Contains(string(got), `structured_outputs`) || !b.ConstrainsTools() {
		t.Errorf("strategy %q, upstream got %s", resp.Strategy, got)
	}
}

func TestBackend_FormatShapesTheTagAndNoAllowedSetLeavesTheLabel(t *testing.T) {
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer up.Close()
	b, err := New(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1", Format: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(request), Allowed: []string{"get_time"}})
	if err != nil {
		t.Fatal(err)
	}
	// A Llama 3 model writes {"name": "...", "parameters": ...}; a Hermes tag would never
	// trigger on it and constrain nothing.
	if !strings.Contains(string(got), `\\\"parameters\\\": `) || strings.Contains(string(got), `tool_call`) {
		t.Errorf("the tag is not in Llama 3's format: %s", got)
	}
	if resp.Strategy != "mask" {
		t.Errorf("strategy %q, want mask", resp.Strategy)
	}
	resp, err = b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(request)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "" {
		t.Errorf("without an allowed set the gateway's label must stand, got %q", resp.Strategy)
	}
	if _, err := New(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1", Format: "chatml"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

// vLLM takes a cache_salt; the same type serves SGLang (NewPlaced), which does not, so
// only New's backends claim it, and only they write it.
func TestCacheSalt_OnlyVLLMWritesIt(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}],"cache_salt":"mine"}`
	v, _ := New(openaicompat.Options{Name: "v", BaseURL: srv.URL + "/v1"})
	s, _ := NewPlaced(openaicompat.Options{Name: "s", BaseURL: srv.URL + "/v1"}, StructuredOutputs)
	if !v.IsolatesCache() || s.IsolatesCache() {
		t.Fatalf("IsolatesCache: vllm %v, placed %v", v.IsolatesCache(), s.IsolatesCache())
	}
	if _, err := v.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "m", CacheSalt: "abc123"}); err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","messages":[{"role":"user","content":"hi"}],"cache_salt":"abc123"}`; string(got) != want {
		t.Errorf("vllm sent %s, want %s", got, want)
	}
	if _, err := s.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "m", CacheSalt: "abc123"}); err != nil {
		t.Fatal(err)
	}
	if string(got) != body {
		t.Errorf("a backend without cache_salt changed the body: %s", got)
	}
}
