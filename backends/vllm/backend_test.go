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

// TestConstrain_KnownToolsAreComparedNotTrusted: the tools array of a ToolsID is scanned
// once and then compared byte for byte; a later body under the same ToolsID whose array
// differs (here, by a byte that makes it invalid JSON) is scanned again and refused, and
// the entries kept stay bounded however many ToolsIDs pass.
func TestConstrain_KnownToolsAreComparedNotTrusted(t *testing.T) {
	b, err := New(openaicompat.Options{Name: "v", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	req := &backends.Request{Body: []byte(request), ToolsID: "cat-1", Allowed: []string{"get_weather"}}
	first, o1, err := b.constrain(req.Body, req)
	if err != nil || o1 != Constrained {
		t.Fatalf("first: outcome %v, err %v", o1, err)
	}
	first = append([]byte(nil), first...)
	if n, _, ok := b.known.scope("cat-1").Match([]byte(request[strings.Index(request, `[{"type"`):])); !ok || n == 0 {
		t.Fatalf("the first scan did not remember the tools array (n %d)", n)
	}
	second, o2, err := b.constrain(req.Body, req)
	if err != nil || o2 != Constrained || string(second) != string(first) {
		t.Fatalf("second, vouched for: outcome %v, err %v, same body %v", o2, err, string(second) == string(first))
	}
	// The same ToolsID with a broken array: a comma missing between the two tools.
	broken := strings.Replace(request, `}}},{"type"`, `}}}{"type"`, 1)
	if broken == request {
		t.Fatal("the test's edit did not apply")
	}
	bad := &backends.Request{Body: []byte(broken), ToolsID: "cat-1", Allowed: []string{"get_weather"}}
	if _, _, err := b.constrain(bad.Body, bad); err == nil {
		t.Fatal("a broken tools array under a known ToolsID went through unscanned")
	}
	for i := range 3 * maxKnownArrays {
		r := &backends.Request{Body: []byte(request), ToolsID: "cat-" + strings.Repeat("x", i+2), Allowed: []string{"get_time"}}
		if _, _, err := b.constrain(r.Body, r); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.known.entries); n != maxKnownArrays {
		t.Errorf("%d arrays kept after %d ToolsIDs, want the bound %d", n, 3*maxKnownArrays+1, maxKnownArrays)
	}
}
