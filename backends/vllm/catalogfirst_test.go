package vllm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/masking"
)

const cfTools = `[` +
	`{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},` +
	`{"type":"function","function":{"name":"write_file","description":"Write a file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}}}}}]`

// cfRequest is a session's first request: its system prompt, a second system message,
// the user's turn and the catalog.
func cfRequest(system, extra string) string {
	return `{"model":"qwen","messages":[{"role":"system","content":"` + system + `"},{"role": "system", "content": "Be brief."},` +
		`{"role":"user","content":"hi"}],"tools":` + cfTools + extra + `}`
}

// sentBy returns a function that sends a request through b and returns the body its
// upstream received.
func sentBy(t *testing.T, place func(openaicompat.Options) (*Backend, error), format string) func(*backends.Request) []byte {
	t.Helper()
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[]}`)
	}))
	t.Cleanup(up.Close)
	b, err := place(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1", Format: format})
	if err != nil {
		t.Fatal(err)
	}
	return func(r *backends.Request) []byte {
		t.Helper()
		got = nil
		if _, err := b.ChatCompletion(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return got
	}
}

// TestCatalogFirst_GoldenBodies: the body vLLM receives for a catalog-first request, per
// format. Under Hermes (configured, or the default with no format) the client's system
// messages sit behind an empty one, every other byte where the structural tag alone
// would leave it; every other format gets the client's messages as they came. The same
// request with a ToolsID (the tools array vouched for, not scanned) gets the same bytes,
// and without CatalogFirst the messages never move.
func TestCatalogFirst_GoldenBodies(t *testing.T) {
	in := cfRequest("You are an agent. Project: /home/a", "")
	msgs, _ := oai.Get([]byte(in), "messages")
	moved := `[` + oai.EmptySystem + `,` + string(msgs[1:])
	for _, format := range append([]string{""}, masking.FormatNames()...) {
		name := format
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			send := sentBy(t, New, format)
			req := func(on bool, id string) *backends.Request {
				return &backends.Request{Body: []byte(in), Allowed: []string{"read_file"}, CatalogFirst: on, ToolsID: id}
			}
			got := send(req(true, ""))
			golden := filepath.Join("testdata", "catalog_first_"+name+".json")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body changed:\n got %s\nwant %s", got, want)
			}
			wantMsgs := string(msgs)
			if format == "" || format == "hermes" {
				wantMsgs = moved
			}
			if m, _ := oai.Get(got, "messages"); string(m) != wantMsgs {
				t.Errorf("messages %s, want %s", m, wantMsgs)
			}
			if again := send(req(true, "cat-1")); !bytes.Equal(again, got) {
				t.Errorf("with a ToolsID:\n got %s\nwant %s", again, got)
			}
			if m, _ := oai.Get(send(req(false, "")), "messages"); !bytes.Equal(m, msgs) {
				t.Errorf("CatalogFirst off moved the messages: %s", m)
			}
		})
	}
}

// TestCatalogFirst_LeavesWhatItCannotLayOut: no tools, an empty tools array, tool_choice
// "none", no leading system message, an empty one: the body goes as the tag alone makes
// it (here, with no allowed set given and nothing to constrain, as it came).
func TestCatalogFirst_LeavesWhatItCannotLayOut(t *testing.T) {
	send := sentBy(t, New, "hermes")
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}],"tools":[]}`,
		cfRequest("s", `,"tool_choice":"none"`),
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + cfTools + `,"tool_choice":"none"}`,
		`{"model":"m","messages":[{"role":"system","content":""},{"role":"user","content":"hi"}],"tools":` + cfTools + `,"tool_choice":"none"}`,
	} {
		if got := send(&backends.Request{Body: []byte(body), CatalogFirst: true}); string(got) != body {
			t.Errorf("changed:\n got %s\nwant %s", got, body)
		}
	}
}

// TestCatalogFirst_SessionsShareTheToolsThroughTheTemplate renders what vLLM receives
// through the chat templates the tests render elsewhere (tinymodel's Hermes/Qwen
// template, which the embedded engine's tests hold byte for byte against Python Jinja2,
// and its thinking variant), as vLLM would: the body's messages and tools as the
// template's variables, add_generation_prompt. Two sessions whose system prompts differ
// from their first byte share, catalog first, every byte up to the end of the tools'
// system turn, and each prompt still holds its system prompt exactly once, after the
// tools; in the template's own order they share nothing of the tools.
func TestCatalogFirst_SessionsShareTheToolsThroughTheTemplate(t *testing.T) {
	send := sentBy(t, New, "")
	const end = "</tool_call><|im_end|>\n" // the end of the tools' system turn
	for name, src := range map[string]string{"chat": tinymodel.ChatTemplate, "thinking": tinymodel.ThinkingTemplate} {
		tmpl, err := jinja.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, on := range []bool{true, false} {
			prompt := func(system string) string {
				body := send(&backends.Request{Body: []byte(cfRequest(system, "")), Allowed: []string{"read_file"}, CatalogFirst: on})
				p, err := renderBody(tmpl, body)
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				if n := strings.Count(p, system); n != 1 {
					t.Errorf("%s, catalog first %v: the system prompt appears %d times:\n%s", name, on, n, p)
				}
				if n := strings.Count(p, "Be brief."); n != 1 {
					t.Errorf("%s, catalog first %v: the second system message appears %d times", name, on, n)
				}
				return p
			}
			pa, pb := prompt("A project at /home/a"), prompt("B project at /home/b")
			common := 0
			for common < len(pa) && common < len(pb) && pa[common] == pb[common] {
				common++
			}
			tools := strings.Index(pa, end) + len(end)
			if tools < len(end) || !strings.Contains(pa[:tools], `"name": "write_file"`) && !strings.Contains(pa[:tools], `"name":"write_file"`) {
				t.Fatalf("%s: no tools block in\n%s", name, pa)
			}
			if on {
				after := "<|im_start|>system\nA project at /home/a<|im_end|>\n<|im_start|>system\nBe brief.<|im_end|>\n"
				if common < tools || !strings.HasPrefix(pa[tools:], after) {
					t.Errorf("%s, catalog first: %d bytes in common, the tools end at %d:\n%s", name, common, tools, pa)
				}
			} else if common >= tools {
				t.Errorf("%s, template order: %d bytes in common, the tools end at %d", name, common, tools)
			}
		}
	}
}

// renderBody renders a Chat Completions body's messages and tools through tmpl, object
// keys in the body's order (tojson then writes them as the body does).
func renderBody(tmpl *jinja.Template, body []byte) (string, error) {
	data := map[string]jinja.Value{"add_generation_prompt": jinja.NewBool(true), "bos_token": jinja.NewString("")}
	for _, k := range []string{"messages", "tools"} {
		raw, ok := oai.Get(body, k)
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		v, err := jinjaValue(dec)
		if err != nil {
			return "", err
		}
		data[k] = v
	}
	return tmpl.RenderValues(data)
}

func jinjaValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return jinja.FromGoValue(tok), nil // string, bool, json.Number, nil
	}
	var items []jinja.Value
	obj := jinja.NewDict()
	for dec.More() {
		var key string
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return jinja.Value{}, err
			}
			key = k.(string)
		}
		v, err := jinjaValue(dec)
		if err != nil {
			return jinja.Value{}, err
		}
		if d == '{' {
			obj.AsDict().Set(key, v)
		} else {
			items = append(items, v)
		}
	}
	if _, err := dec.Token(); err != nil {
		return jinja.Value{}, err
	}
	switch d {
	case '{':
		return obj, nil
	case '[':
		return jinja.NewList(items), nil
	}
	return jinja.Value{}, errors.New(fmt.Sprint("unexpected ", d))
}

// TestCatalogFirst_ATemplateThatRefusesItGetsTheClientsOrder: an engine whose template
// raises on a system message after the first (Gemma's: "Conversation roles must
// alternate", vLLM's 400) is sent the client's order again at once and answers; the
// backend then keeps the template's order. A 400 that the client's order gets too, or a
// context overflow, is the client's answer and changes nothing.
func TestCatalogFirst_ATemplateThatRefusesItGetsTheClientsOrder(t *testing.T) {
	const refusal = `{"object":"error","message":"Conversation roles must alternate user/assistant/user/assistant/...","type":"BadRequestError","param":null,"code":400}`
	const overflow = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}`
	var sent []string
	answer := refusal // what a catalog-first body gets; the client's order gets plain unless always
	always := false
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		sent = append(sent, string(got))
		if always || bytes.Contains(got, []byte(`"messages":[`+oai.EmptySystem)) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, answer)
			return
		}
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	body := cfRequest("You are an agent.", "")
	req := &backends.Request{Body: []byte(body), Allowed: []string{"read_file"}, CatalogFirst: true}
	moved := func(s string) bool {
		m, _ := oai.Get([]byte(s), "messages")
		return bytes.HasPrefix(m, []byte(`[`+oai.EmptySystem))
	}
	newBackend := func() *Backend {
		b, err := New(openaicompat.Options{Name: "v", BaseURL: up.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Refused for the layout: sent again in the client's order, which is answered.
	b := newBackend()
	sent = nil
	if _, err := b.ChatCompletion(context.Background(), req); err != nil {
		t.Fatalf("the client's order was not tried: %v", err)
	}
	if len(sent) != 2 || !moved(sent[0]) || moved(sent[1]) {
		t.Fatalf("sent %d bodies (first moved %v), want the catalog-first one then the client's", len(sent), len(sent) > 0 && moved(sent[0]))
	}
	sent = nil
	if _, err := b.ChatCompletion(context.Background(), req); err != nil || len(sent) != 1 || moved(sent[0]) {
		t.Fatalf("after a refusal: err %v, %d bodies, want one in the client's order", err, len(sent))
	}

	// Refused whatever the order: the second refusal is the answer, and the layout stays.
	b, always = newBackend(), true
	sent = nil
	_, err := b.ChatCompletion(context.Background(), req)
	var e *backends.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || len(sent) != 2 {
		t.Fatalf("refused in both orders: err %v, %d bodies", err, len(sent))
	}
	sent = nil
	b.ChatCompletion(context.Background(), req)
	if len(sent) == 0 || !moved(sent[0]) {
		t.Error("a refusal in both orders turned the layout off")
	}

	// A context overflow is not the template's refusal: no second request.
	b, answer, always = newBackend(), overflow, false
	sent = nil
	if _, err := b.ChatCompletion(context.Background(), req); !errors.As(err, &e) || e.Overflow == nil || len(sent) != 1 {
		t.Errorf("overflow: err %v, %d bodies, want the overflow after one", err, len(sent))
	}
}

// BenchmarkCatalogFirst is what the layout adds to a request carrying the gateway's
// whole catalog (500 tools, ~300 KB) under one ToolsID: one parse of the body, its tools
// array compared with the one a scan already validated rather than scanned, and the
// messages member rewritten.
func BenchmarkCatalogFirst(b *testing.B) {
	body, _ := benchBody(500)
	body = bytes.Replace(body, []byte(`"messages":[`), []byte(`"messages":[{"role":"system","content":"You are an agent."},`), 1)
	be, err := New(openaicompat.Options{Name: "v", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		b.Fatal(err)
	}
	req := &backends.Request{Body: body, ToolsID: "cat-1", CatalogFirst: true}
	if got := be.catalogFirst(body, req); len(got) != len(body)+len(oai.EmptySystem)+1 {
		b.Fatalf("not laid out: %d bytes from %d", len(got), len(body))
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		be.catalogFirst(body, req)
	}
}
