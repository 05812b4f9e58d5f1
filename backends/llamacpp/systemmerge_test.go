package llamacpp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// A template that refuses a system message after the first (as Llama's, Mistral's and
// Gemma's raise "System message must be at the beginning"): the first request's warning
// says the late system and developer messages are merged, the render that fails is
// tried again once with them merged into the leading system message, and later
// requests are merged before they are rendered.
func TestLateSystem_MergedWhereTheTemplateRefusesIt(t *testing.T) {
	f := newFake(t, "ok")
	var mu sync.Mutex
	var renders [][]byte
	rendered := func() [][]byte { mu.Lock(); defer mu.Unlock(); return append([][]byte(nil), renders...) }
	reset := func() { mu.Lock(); renders = nil; mu.Unlock() }
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apply-template" {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			renders = append(renders, body)
			mu.Unlock()
			msgs, _ := json.Marshal(json.RawMessage(mustGet(t, body, "messages")))
			if lateSystemAt(msgs) != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"error":{"code":500,"message":"System message must be at the beginning.","type":"server_error"}}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		f.Server.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(refusing.Close)
	b := newTestBackend(t, refusing.URL, nil)
	body := `{"model":"q","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":"Hello."},{"role":"developer","content":[{"type":"text","text":"Answer in French."}]},{"role":"user","content":"and now?"}]}`

	notes := b.Notes(background(t), []byte(body))
	if len(notes) != 1 || !strings.Contains(notes[0], "merged into the first") {
		t.Fatalf("notes %q, want the merge said", notes)
	}
	for round := range 2 {
		reset()
		resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Model: "q"})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !strings.Contains(string(resp.Body), `"content":"ok"`) {
			t.Errorf("round %d: answer %s", round, resp.Body)
		}
		// The template refused only what it was first sent; afterwards the backend
		// knows and merges before rendering.
		renders := rendered()
		if len(renders) != 1 {
			t.Fatalf("round %d: %d renders, want 1 (the template's refusal was learned by Notes)", round, len(renders))
		}
		last := string(mustGet(t, renders[0], "messages"))
		want := `[{"role":"system","content":"Be brief.\n\nAnswer in French."},{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"and now?"}]`
		if last != want {
			t.Errorf("round %d: rendered\n %s\nwant\n %s", round, last, want)
		}
	}

	// Without Notes first (a fresh backend), the refused render is tried again, merged.
	b = newTestBackend(t, refusing.URL, nil)
	reset()
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Model: "q"}); err != nil {
		t.Fatal(err)
	}
	if r := rendered(); len(r) != 2 || lateSystemAt(mustGet(t, r[1], "messages")) != nil {
		t.Errorf("%d renders; the second should be merged", len(r))
	}
	// A request without a late system message gets no note and no probe.
	reset()
	if n := b.Notes(background(t), []byte(`{"model":"q","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}]}`)); n != nil || len(rendered()) != 0 {
		t.Errorf("notes %q, %d renders", n, len(rendered()))
	}
}

func mustGet(t *testing.T, body []byte, key string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m[key]
}
