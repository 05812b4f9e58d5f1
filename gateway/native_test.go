package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/anthropic"
	"github.com/maskgate/maskgate/backends/openai"
	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// nativeUpstream records what reached it and answers with canned bytes.
type nativeUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	path   []string
	bodies []string
	header []http.Header
}

func newNativeUpstream(t *testing.T, whole, stream string) *nativeUpstream {
	t.Helper()
	u := &nativeUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.path = append(u.path, r.URL.RequestURI())
		u.bodies = append(u.bodies, string(b))
		u.header = append(u.header, r.Header.Clone())
		u.mu.Unlock()
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, whole)
	}))
	t.Cleanup(u.Close)
	return u
}

func nativeGateway(t *testing.T, be backends.Backend, edit func(*gateway.Options)) *httptest.Server {
	t.Helper()
	o := gateway.Options{Upstreams: []gateway.Upstream{{Name: "native", Models: []string{"*"}, Backend: be}}, Keys: testKeys()}
	if edit != nil {
		edit(&o)
	}
	srv := httptest.NewServer(gateway.New(o))
	t.Cleanup(srv.Close)
	return srv
}

const (
	// Odd spacing and member order: a re-encoding would show.
	nativeResponsesReq  = `{ "model":"gpt-x",  "input":[{"role":"user","content":"hi"}], "previous_response_id":"resp_2", "store":true,"reasoning":{"effort":"low"} }`
	nativeResponsesResp = `{"id":"resp_2","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello","annotations":[]}]}],` +
		`"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":125}, "extra_field_from_the_future": [1, 2]}`
	nativeResponsesStream = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_2\",\"status\":\"in_progress\",\"usage\":null}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"hello\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_2\",\"status\":\"completed\",\"usage\":{\"input_tokens\":120,\"input_tokens_details\":{\"cached_tokens\":100},\"output_tokens\":5,\"total_tokens\":125}}}\n\n"
)

// An OpenAI upstream gets a Responses request the gateway does not manage as the client
// sent it, and the client gets the answer as OpenAI sent it; the usage is still counted.
func TestNative_ResponsesPassToOpenAI(t *testing.T) {
	up := newNativeUpstream(t, nativeResponsesResp, nativeResponsesStream)
	be, err := openai.New(openai.Options{Options: openaicompat.Options{Name: "native", BaseURL: up.URL + "/v1", APIKey: "sk-upstream-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	gw := nativeGateway(t, be, nil)

	// The first response the upstream mints (resp_2) is alice's to continue.
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"gpt-x","input":"hi"}`); status != 200 || out != nativeResponsesResp {
		t.Fatalf("first: %d %s", status, out)
	}
	up.path, up.bodies, up.header = nil, nil, nil
	status, h, out := call(t, gw, "POST", "/v1/responses", aliceKey, nativeResponsesReq, "OpenAI-Beta", "responses=v1")
	if status != 200 || out != nativeResponsesResp {
		t.Errorf("whole: %d %s, want the upstream's bytes", status, out)
	}
	if up.bodies[0] != nativeResponsesReq || up.path[0] != "/v1/responses" {
		t.Errorf("upstream got %s %s, want the client's bytes at /v1/responses", up.path[0], up.bodies[0])
	}
	if got := up.header[0].Get("Authorization"); got != "Bearer sk-upstream-secret" {
		t.Errorf("upstream credential %q: the client's key must not reach it, the backend's must", got)
	}
	if up.header[0].Get("OpenAI-Beta") != "responses=v1" {
		t.Errorf("OpenAI-Beta not passed on: %v", up.header[0])
	}
	if h.Get(gateway.HeaderPromptTokens) != "120" || h.Get(gateway.HeaderCachedTokens) != "100" || h.Get(gateway.HeaderCache) != "reported" {
		t.Errorf("accounting headers %v", h)
	}

	stream := strings.Replace(nativeResponsesReq, `"store":true`, `"stream":true`, 1)
	req, _ := http.NewRequest("POST", gw.URL+"/v1/responses", strings.NewReader(stream))
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != nativeResponsesStream {
		t.Errorf("stream:\n%s\nwant the upstream's bytes:\n%s", body, nativeResponsesStream)
	}
	if resp.Trailer.Get(gateway.HeaderPromptTokens) != "120" || resp.Trailer.Get(gateway.HeaderCachedTokens) != "100" {
		t.Errorf("stream trailers %v", resp.Trailer)
	}
}

const (
	nativeMessagesReq    = `{"model":"claude-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"adaptive"},"context_management":{"edits":[]}}`
	nativeMessagesResp   = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":0,"output_tokens":7}}`
	nativeMessagesStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":90,\"cache_creation_input_tokens\":0,\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// An Anthropic upstream gets a Messages request the gateway does not manage as the
// client sent it, query and beta header included, under the backend's own key.
func TestNative_MessagesPassToAnthropic(t *testing.T) {
	up := newNativeUpstream(t, nativeMessagesResp, nativeMessagesStream)
	be, err := anthropic.New(anthropic.Options{Name: "native", BaseURL: up.URL, APIKey: "sk-ant-upstream"})
	if err != nil {
		t.Fatal(err)
	}
	gw := nativeGateway(t, be, nil)
	status, h, out := call(t, gw, "POST", "/v1/messages?beta=true", "", nativeMessagesReq, "x-api-key", aliceKey, "anthropic-beta", "context-management-2025-06-27")
	if status != 200 || out != nativeMessagesResp {
		t.Errorf("whole: %d %s", status, out)
	}
	if up.path[0] != "/v1/messages?beta=true" || up.bodies[0] != nativeMessagesReq {
		t.Errorf("upstream got %s %s", up.path[0], up.bodies[0])
	}
	if up.header[0].Get("x-api-key") != "sk-ant-upstream" || up.header[0].Get("anthropic-beta") != "context-management-2025-06-27" {
		t.Errorf("upstream headers %v", up.header[0])
	}
	if h.Get(gateway.HeaderPromptTokens) != "100" || h.Get(gateway.HeaderCachedTokens) != "90" {
		t.Errorf("accounting: prompt %s cached %s, want 100 and 90 (input 10 + 90 read)", h.Get(gateway.HeaderPromptTokens), h.Get(gateway.HeaderCachedTokens))
	}

	stream := strings.Replace(nativeMessagesReq, `"max_tokens":64`, `"max_tokens":64,"stream":true`, 1)
	req, _ := http.NewRequest("POST", gw.URL+"/v1/messages", strings.NewReader(stream))
	req.Header.Set("x-api-key", aliceKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != nativeMessagesStream {
		t.Errorf("stream:\n%s\nwant the upstream's bytes", body)
	}
	if resp.Trailer.Get(gateway.HeaderPromptTokens) != "100" || resp.Trailer.Get(gateway.HeaderCachedTokens) != "90" {
		t.Errorf("stream trailers %v", resp.Trailer)
	}
}

// With tools under management the request is the gateway's to shape: it is translated
// to Chat Completions, whatever the upstream could take.
func TestNative_ManagedToolsAreTranslated(t *testing.T) {
	up := newNativeUpstream(t, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`, "")
	be, err := openai.New(openai.Options{Options: openaicompat.Options{Name: "native", BaseURL: up.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	gw := nativeGateway(t, be, func(o *gateway.Options) {
		o.Tools, o.State = bigCatalog(t), state.NewMemory(state.Options{})
	})
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"gpt-x","input":"hi"}`)
	if status != 200 || !strings.Contains(out, `"output_text"`) || up.path[0] != "/v1/chat/completions" {
		t.Errorf("%d %s; upstream path %v", status, out, up.path)
	}
}

// A relayed stream the upstream breaks ends with the door's own error event, after
// what the upstream had sent, and the failure is counted.
func TestNative_BrokenStreamEndsWithTheDoorsErrorEvent(t *testing.T) {
	for _, c := range []struct {
		name, path, body, first, want string
		backend                       func(url string) (backends.Backend, error)
	}{
		{"responses", "/v1/responses", `{"model":"gpt-x","input":"hi","stream":true}`,
			"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_2\"}}\n\n",
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"upstream_truncated\"",
			func(url string) (backends.Backend, error) {
				return openai.New(openai.Options{Options: openaicompat.Options{Name: "native", BaseURL: url + "/v1"}})
			}},
		{"messages", "/v1/messages", `{"model":"claude-x","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}}\n\n",
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"",
			func(url string) (backends.Backend, error) {
				return anthropic.New(anthropic.Options{Name: "native", BaseURL: url})
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, c.first+"data: {\"half\":")
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler) // the connection drops mid-event
			}))
			defer up.Close()
			be, err := c.backend(up.URL)
			if err != nil {
				t.Fatal(err)
			}
			gw := nativeGateway(t, be, func(o *gateway.Options) { o.Keys = nil })
			status, _, out := call(t, gw, "POST", c.path, "", c.body)
			if status != 200 || !strings.HasPrefix(out, c.first) || !strings.Contains(out, c.want) {
				t.Errorf("%d:\n%s\nwant the upstream's first event, then %s", status, out, c.want)
			}
		})
	}
}
