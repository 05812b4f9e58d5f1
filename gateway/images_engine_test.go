package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/backends/ollama"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// pngData is a 1x1 PNG, base64: what a client sends as an image.
const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const cannotSee = "[image omitted: this model cannot read images]"

// engineRecorder is a reverse proxy in front of llama-server that keeps the body of
// every request it passes, by path.
type engineRecorder struct {
	mu     sync.Mutex
	bodies map[string][]string
}

func (e *engineRecorder) proxy(t *testing.T, target string) *httptest.Server {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = enginetest.ProxyTransport()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.bodies[r.URL.Path] = append(e.bodies[r.URL.Path], string(b))
		e.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (e *engineRecorder) last(path string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bodies[path]
	if len(b) == 0 {
		return ""
	}
	return b[len(b)-1]
}

// imageDoors are two-turn chats whose first user turn carries an image (a data: URL),
// per door: the first turn alone, then the same with an answer and a second user turn.
func imageDoors(model string) []struct{ door, path, turn1, turn2 string } {
	return []struct{ door, path, turn1, turn2 string }{
		{"chat", "/v1/chat/completions",
			`{"model":"` + model + `","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngData + `"}}]}]}`,
			`{"model":"` + model + `","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngData + `"}}]},{"role":"assistant","content":"a dot"},{"role":"user","content":"and its color?"}]}`},
		{"responses", "/v1/responses",
			`{"model":"` + model + `","max_output_tokens":16,"store":false,"input":[{"role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,` + pngData + `"}]}]}`,
			`{"model":"` + model + `","max_output_tokens":16,"store":false,"input":[{"role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,` + pngData + `"}]},{"role":"assistant","content":[{"type":"output_text","text":"a dot"}]},{"role":"user","content":"and its color?"}]}`},
		{"messages", "/v1/messages",
			`{"model":"` + model + `","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngData + `"}}]}]}`,
			`{"model":"` + model + `","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngData + `"}}]},{"role":"assistant","content":"a dot"},{"role":"user","content":"and its color?"}]}`},
	}
}

// TestImages_TextOnlyLlamaServer: a real llama-server serving the tiny model (no
// projector: /props says vision false) is sent, through each door, whole and streamed, a
// two-turn chat whose first turn carries an image. Both turns answer 200 with a warning
// naming the image, and the prompt llama-server renders and generates from holds the
// note where the image was, never its base64; the Responses and Messages answers list
// the warning in their notice too. Before, /apply-template answered 500
// "image input is not supported" on the first turn and again on every later one.
func TestImages_TextOnlyLlamaServer(t *testing.T) {
	ls := enginetest.Llama(t)
	rec := &engineRecorder{bodies: map[string][]string{}}
	px := rec.proxy(t, ls.URL)
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: px.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "llama", Kind: "llamacpp", Models: []string{"*"}, Backend: be}}}))
	t.Cleanup(gw.Close)

	for _, d := range imageDoors(ls.Model) {
		for _, stream := range []bool{false, true} {
			for turn, body := range []string{d.turn1, d.turn2} {
				if stream {
					body = strings.Replace(body, `{"model"`, `{"stream":true,"model"`, 1)
				}
				resp, err := http.Post(gw.URL+d.path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				name := d.door
				if stream {
					name += " streamed"
				}
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s turn %d: status %d: %s", name, turn+1, resp.StatusCode, out)
					continue
				}
				if stream && (bytes.Contains(out, []byte("event: error")) || bytes.Contains(out, []byte(`"type":"error"`))) {
					t.Errorf("%s turn %d: the stream carries an error: %s", name, turn+1, out)
				}
				warns := resp.Header.Values(gateway.HeaderWarning)
				if len(warns) != 1 || !strings.HasSuffix(warns[0], ": image omitted: this model cannot read images") {
					t.Errorf("%s turn %d: warnings %q, want one naming the image", name, turn+1, warns)
				}
				// The Responses and Messages answers list it in their notice too, as for
				// a document (the only place a WebSocket client can read it).
				if d.door != "chat" && !bytes.Contains(out, []byte(`"warnings":["messages[0].content[1]: image omitted: this model cannot read images"]`)) {
					t.Errorf("%s turn %d: the answer's notice lacks the warning: %.600s", name, turn+1, out)
				}
				var comp struct {
					Prompt string `json:"prompt"`
				}
				if err := json.Unmarshal([]byte(rec.last("/completion")), &comp); err != nil {
					t.Fatalf("%s turn %d: /completion body: %v", name, turn+1, err)
				}
				if strings.Count(comp.Prompt, cannotSee) != 1 || strings.Contains(comp.Prompt, pngData[:40]) {
					t.Errorf("%s turn %d: the engine's prompt holds %d notes (want 1) or the image's base64:\n%s", name, turn+1, strings.Count(comp.Prompt, cannotSee), comp.Prompt)
				}
				if tmpl := rec.last("/apply-template"); strings.Contains(tmpl, pngData[:40]) {
					t.Errorf("%s turn %d: /apply-template was sent the image: %.300s", name, turn+1, tmpl)
				}
				if turn == 1 && !strings.Contains(comp.Prompt, "and its color?") {
					t.Errorf("%s turn 2: the prompt lacks the second turn:\n%s", name, comp.Prompt)
				}
			}
		}
	}
}

// TestImages_TextOnlyOllama: a real Ollama serving the tiny model (its /api/show lists
// no vision) is sent, through the Chat Completions door, the two-turn chat whose first
// turn carries an image: both turns answer 200 with the warning (before, the backend
// refused every image part with a 400). The control, the same image sent to Ollama
// directly, is logged: Ollama 0.17.4 answers 200 and drops the image silently, where the
// note tells the model and the warning the client.
func TestImages_TextOnlyOllama(t *testing.T) {
	srv := enginetest.Ollama(t)
	be, err := ollama.New(ollama.Options{Name: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "ollama", Kind: "ollama", Models: []string{"*"}, Backend: be}}}))
	t.Cleanup(gw.Close)
	d := imageDoors(srv.Model)[0]
	for turn, body := range []string{d.turn1, d.turn2} {
		resp, err := http.Post(gw.URL+d.path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("turn %d: status %d: %s", turn+1, resp.StatusCode, out)
		}
		if warns := resp.Header.Values(gateway.HeaderWarning); len(warns) != 1 || warns[0] != "messages[0].content[1]: image omitted: this model cannot read images" {
			t.Errorf("turn %d: warnings %q", turn+1, warns)
		}
	}
	control := `{"model":"` + srv.Model + `","stream":false,"options":{"num_predict":2},"messages":[{"role":"user","content":"what is this?","images":["` + pngData + `"]}]}`
	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(control))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("control: the image sent to Ollama itself: %d %.200s", resp.StatusCode, out)
}

// TestImages_FileIDs: an image by file id (Responses input_image.file_id, Messages
// source.type "file"), which the gateway cannot resolve, is a 400 in the door's own
// envelope naming the field in the turn being sent, and in the history of a later turn a
// note with a warning: that turn answers 200 from a real llama-server.
func TestImages_FileIDs(t *testing.T) {
	ls := enginetest.Llama(t)
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: ls.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(gateway.New(gateway.Options{
		Upstreams: []gateway.Upstream{{Name: "llama", Kind: "llamacpp", Models: []string{"*"}, Backend: be}}}))
	t.Cleanup(gw.Close)
	m := ls.Model
	respImg := `{"role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","file_id":"file-1"}]}`
	msgImg := `{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"file","file_id":"file-1"}}]}`
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string // in the body (an error) or the warning
	}{
		{"responses now", "/v1/responses", `{"model":"` + m + `","max_output_tokens":16,"store":false,"input":[` + respImg + `]}`,
			400, `"param":"input[0].content[1].file_id"`},
		{"responses history", "/v1/responses", `{"model":"` + m + `","max_output_tokens":16,"store":false,"input":[` + respImg + `,{"role":"assistant","content":"ok"},{"role":"user","content":"and?"}]}`,
			200, "input[0].content[1].file_id: image omitted: the gateway cannot resolve images by file_id"},
		{"messages now", "/v1/messages", `{"model":"` + m + `","max_tokens":4,"messages":[` + msgImg + `]}`,
			400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.source.type: file sources (the Files API) are not supported`},
		{"messages history", "/v1/messages", `{"model":"` + m + `","max_tokens":4,"messages":[` + msgImg + `,{"role":"assistant","content":"ok"},{"role":"user","content":"and?"}]}`,
			200, "messages.0.content.1.source: image omitted: the gateway cannot read images from the Files API"},
	} {
		resp, err := http.Post(gw.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, resp.StatusCode, c.status, out)
			continue
		}
		if c.status != 200 {
			if !strings.Contains(string(out), c.want) {
				t.Errorf("%s: body %s, want it to hold %s", c.name, out, c.want)
			}
			continue
		}
		if warns := resp.Header.Values(gateway.HeaderWarning); len(warns) != 1 || warns[0] != c.want {
			t.Errorf("%s: warnings %q, want [%q]", c.name, warns, c.want)
		}
	}
}

// TestImages_VisionShapeOnRealLlamaServer holds the vision path's request to the real
// llama-server, which no test model can see for (the tiny model has no projector): a
// proxy makes GET /props say vision true, the rest is the real server. The template
// renders the marker /props names where the image was, and /completion reads the prompt
// object's multimodal_data as images: it refuses them for the model ("Multimodal data
// provided, but model does not support multimodal requests"), not for their shape.
func TestImages_VisionShapeOnRealLlamaServer(t *testing.T) {
	ls := enginetest.Llama(t)
	u, err := url.Parse(ls.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = enginetest.ProxyTransport()
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/props" {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		b = bytes.Replace(b, []byte(`"vision":false`), []byte(`"vision":true`), 1)
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	rec := &engineRecorder{bodies: map[string][]string{}}
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies[r.URL.Path] = append(rec.bodies[r.URL.Path], string(b))
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(px.Close)
	var props struct {
		MediaMarker string `json:"media_marker"`
	}
	resp, err := http.Get(ls.URL + "/props")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	if props.MediaMarker == "" {
		t.Fatal("llama-server's /props names no media_marker")
	}
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: px.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	body := imageDoors(ls.Model)[0].turn1
	if notes := be.Notes(t.Context(), []byte(body)); notes != nil {
		t.Errorf("notes %q for an image a seeing engine is given", notes)
	}
	_, err = be.ChatCompletion(t.Context(), &backends.Request{Body: []byte(body), Model: ls.Model})
	if err == nil || !strings.Contains(err.Error(), "Multimodal data provided, but model does not support multimodal requests") {
		t.Errorf("error %v, want llama-server's refusal of the images for the model", err)
	}
	var comp struct {
		Prompt struct {
			PromptString   string   `json:"prompt_string"`
			MultimodalData []string `json:"multimodal_data"`
		} `json:"prompt"`
	}
	if err := json.Unmarshal([]byte(rec.last("/completion")), &comp); err != nil {
		t.Fatalf("/completion body: %v", err)
	}
	if strings.Count(comp.Prompt.PromptString, props.MediaMarker) != 1 || len(comp.Prompt.MultimodalData) != 1 || comp.Prompt.MultimodalData[0] != pngData {
		t.Errorf("/completion prompt %q with %d data, want the marker %s once and the image", comp.Prompt.PromptString, len(comp.Prompt.MultimodalData), props.MediaMarker)
	}
}
