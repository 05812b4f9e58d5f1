package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// A request with odd spacing, key order, unicode escapes and number formats: any
// re-marshalling would change at least one of its bytes.
const oddRequest = "{ \"messages\" :[{\"role\":\"user\",\"content\":\"caf\\u00e9 \\\"q\\\"\"}],\n\t\"model\":\"m1\", \"temperature\": 1.0e0,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"z\",\"parameters\":{\"type\":\"object\",\"properties\":{\"b\":{},\"a\":{}}}}}] ,\"x_extra\":{\"k\":[1,2.50]} }"

func TestChat_ForwardsClientBytesUnchanged(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up)
	resp, body := gw.post(t, oddRequest)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := string(up.lastBody()); got != oddRequest {
		t.Errorf("upstream got different bytes:\n got %q\nwant %q", got, oddRequest)
	}
	if string(body) != completionJSON {
		t.Errorf("client got different bytes:\n got %s\nwant %s", body, completionJSON)
	}
	if got := resp.Header.Get(gateway.HeaderCache); got != "reported" {
		t.Errorf("%s = %q, want reported", gateway.HeaderCache, got)
	}
	if got := resp.Header.Get(gateway.HeaderStrategy); got != "eager" {
		t.Errorf("%s = %q, want eager", gateway.HeaderStrategy, got)
	}
}

func TestChat_StreamAddsOnlyIncludeUsage(t *testing.T) {
	up := newUpstream(t, replySSE(nil, true))
	gw := gatewayFor(t, up)
	req := strings.Replace(oddRequest, `"model":"m1",`, `"model":"m1","stream":true,`, 1)
	gw.post(t, req)
	want := strings.TrimSuffix(req, " }") + `,"stream_options":{"include_usage":true} }`
	if got := string(up.lastBody()); got != want {
		t.Errorf("upstream body:\n got %q\nwant %q", got, want)
	}

	// Options the client set are kept; only include_usage is added.
	req2 := `{"model":"m1","stream":true,"stream_options":{"continuous_usage_stats":false},"messages":[{"role":"user","content":"x"}]}`
	gw.post(t, req2)
	want2 := `{"model":"m1","stream":true,"stream_options":{"continuous_usage_stats":false,"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	if got := string(up.lastBody()); got != want2 {
		t.Errorf("upstream body:\n got %s\nwant %s", got, want2)
	}
}

var streamEvents = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":24}}}`,
}

func TestStream_UsageChunkOnlyWhenAsked(t *testing.T) {
	up := newUpstream(t, replySSE(streamEvents, true))
	gw := gatewayFor(t, up)
	for _, tt := range []struct {
		name string
		req  string
		want []string
	}{
		{"not asked", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`,
			append(append([]string{}, streamEvents[:5]...), "[DONE]")},
		{"asked", `{"model":"m1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"w"}]}`,
			append(append([]string{}, streamEvents...), "[DONE]")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := gw.post(t, tt.req)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("content type %q", ct)
			}
			if diff := cmp.Diff(tt.want, sseEvents(body)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStream_UsageNullMembersStrippedWhenNotAsked(t *testing.T) {
	// vLLM and OpenAI send "usage":null on every chunk once include_usage is on.
	events := []string{
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}],"usage":null}`,
		`{"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
	}
	up := newUpstream(t, replySSE(events, true))
	gw := gatewayFor(t, up)
	_, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	want := []string{`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`, "[DONE]"}
	if diff := cmp.Diff(want, sseEvents(body)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestStream_UpstreamBreakEndsWithErrorNotDone(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+streamEvents[0]+"\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the engine dies mid-stream
		}
	})
	gw := gatewayFor(t, up)
	_, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	ev := sseEvents(body)
	if len(ev) != 2 || ev[0] != streamEvents[0] {
		t.Fatalf("events: %q", ev)
	}
	assertErrorEvent(t, ev[1], "upstream_truncated")
}

func TestStream_MidStreamErrorEventPassesAsError(t *testing.T) {
	up := newUpstream(t, replySSE([]string{streamEvents[0], `{"error":{"message":"engine overloaded","type":"server_error"}}`}, false))
	gw := gatewayFor(t, up)
	_, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	ev := sseEvents(body)
	if len(ev) != 2 {
		t.Fatalf("events: %q", ev)
	}
	msg := assertErrorEvent(t, ev[1], "")
	if !strings.Contains(msg, "engine overloaded") {
		t.Errorf("message %q does not carry the upstream's", msg)
	}
}

func TestStream_HugeLineIsAnErrorNotABuffer(t *testing.T) {
	huge := `{"id":"c","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 9<<20) + `"}}]}`
	up := newUpstream(t, replySSE([]string{streamEvents[0], huge}, true))
	gw := gatewayFor(t, up)
	_, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	ev := sseEvents(body)
	if len(ev) != 2 {
		t.Fatalf("%d events", len(ev))
	}
	assertErrorEvent(t, ev[1], "upstream_response_too_large")
}

func TestStream_LargeChunksUnderTheCapPassIntact(t *testing.T) {
	big := `{"id":"c","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("y", 1<<20) + `"},"finish_reason":null}]}`
	up := newUpstream(t, replySSE([]string{big, big}, true))
	gw := gatewayFor(t, up)
	_, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	if diff := cmp.Diff([]string{big, big, "[DONE]"}, sseEvents(body)); diff != "" {
		t.Errorf("large chunks changed (diff elided, %d bytes)", len(diff))
	}
}

func TestStream_FailureBeforeFirstChunkIsACleanError(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200) // headers, then nothing: the engine crashed
	})
	gw := gatewayFor(t, up)
	resp, body := gw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"w"}]}`)
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	assertEnvelope(t, body, "", "upstream_truncated")
}

func assertErrorEvent(t *testing.T, data, code string) string {
	t.Helper()
	return assertEnvelope(t, []byte(data), "", code)
}

// assertEnvelope checks body is the OpenAI error envelope with param and code (either
// empty means "null"), and returns its message.
func assertEnvelope(t *testing.T, body []byte, param, code string) string {
	t.Helper()
	var env struct {
		Error *struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil || env.Error.Message == nil || env.Error.Type == nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	got := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if param != "*" && got(env.Error.Param) != param {
		t.Errorf("param = %q, want %q (%s)", got(env.Error.Param), param, body)
	}
	if code != "*" && code != "" && got(env.Error.Code) != code {
		t.Errorf("code = %q, want %q (%s)", got(env.Error.Code), code, body)
	}
	return *env.Error.Message
}

func TestChat_ErrorsAreEnvelopesWithTheRightStatus(t *testing.T) {
	okUp := newUpstream(t, replyJSON(200, completionJSON))
	small := func(o *gateway.Options, _ *openaicompat.Options) { o.MaxRequestBytes = 200 }
	tests := []struct {
		name   string
		up     *upstream
		opt    func(*gateway.Options, *openaicompat.Options)
		body   string
		status int
		param  string
		code   string
	}{
		{"malformed JSON", okUp, nil, `{"model":"m1",`, 400, "", ""},
		{"not an object", okUp, nil, `[1,2]`, 400, "", ""},
		{"empty body", okUp, nil, ``, 400, "", ""},
		{"wrong type names the field", okUp, nil, `{"model":"m1","stream":"yes","messages":[{"role":"user","content":"x"}]}`, 400, "stream", ""},
		{"nested wrong type", okUp, nil, `{"model":"m1","stream":true,"stream_options":{"include_usage":1},"messages":[{"role":"user","content":"x"}]}`, 400, "stream_options.include_usage", ""},
		{"missing model", okUp, nil, `{"messages":[{"role":"user","content":"x"}]}`, 400, "model", ""},
		{"missing messages", okUp, nil, `{"model":"m1"}`, 400, "messages", ""},
		{"message without role", okUp, nil, `{"model":"m1","messages":[{"content":"x"}]}`, 400, "messages[0].role", ""},
		{"tools not an array", okUp, nil, `{"model":"m1","messages":[{"role":"user","content":"x"}],"tools":{}}`, 400, "tools", ""},
		{"body over the limit", okUp, small, `{"model":"m1","messages":[{"role":"user","content":"` + strings.Repeat("a", 300) + `"}]}`, 413, "", "request_too_large"},
		{"upstream 400 passes through", newUpstream(t, replyJSON(400, `{"error":{"message":"max_tokens is too large","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}}`)),
			nil, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 400, "max_tokens", "invalid_value"},
		{"upstream 404 bare error", newUpstream(t, replyJSON(404, `{"error":"model \"m1\" not found"}`)),
			nil, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 404, "", ""},
		{"upstream 500 is a 502", newUpstream(t, replyJSON(500, `boom`)),
			nil, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 502, "", ""},
		{"upstream 429 keeps its status", newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			replyJSON(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)(w, r)
		}), nil, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 429, "", ""},
		{"upstream not JSON", newUpstream(t, replyJSON(200, `<html>`)),
			nil, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 502, "", "upstream_invalid_response"},
		{"upstream timeout is a 504", newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}), func(_ *gateway.Options, b *openaicompat.Options) { b.Timeout = 100 * time.Millisecond },
			`{"model":"m1","messages":[{"role":"user","content":"x"}]}`, 504, "", "upstream_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []func(*gateway.Options, *openaicompat.Options)
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			gw := gatewayFor(t, tt.up, opts...)
			resp, body := gw.post(t, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			assertEnvelope(t, body, tt.param, tt.code)
			if tt.status == 429 && resp.Header.Get("Retry-After") != "3" {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		})
	}
}

func TestChat_UnreachableUpstreamIs502(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	be, _ := openaicompat.New(openaicompat.Options{Name: "gone", BaseURL: "http://" + addr + "/v1"})
	srv := newGateway(t, gateway.Upstream{Name: "gone", Models: []string{"*"}, Backend: be})
	resp, body := post(t, srv, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 502 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	assertEnvelope(t, body, "", "upstream_unreachable")
}

func TestChat_UnknownModelIs404(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	be, _ := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	srv := newGateway(t, gateway.Upstream{Name: "up", Models: []string{"m1"}, Backend: be})
	resp, body := post(t, srv, `{"model":"m2","messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 404 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	assertEnvelope(t, body, "model", "model_not_found")
	if len(up.bodies) != 0 {
		t.Error("upstream was called for an unknown model")
	}
}

func TestChat_ClientDisconnectCancelsUpstream(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{})
			cancelled := make(chan struct{})
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: "+streamEvents[0]+"\n\n")
					w.(http.Flusher).Flush()
				}
				close(started)
				select {
				case <-r.Context().Done():
					close(cancelled)
				case <-time.After(10 * time.Second):
				}
			})
			gw := gatewayFor(t, up)
			ctx, cancel := context.WithCancel(context.Background())
			body := `{"model":"m1","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"x"}]}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(body))
			errc := make(chan error, 1)
			go func() {
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errc <- err
			}()
			<-started
			cancel()
			select {
			case <-cancelled:
			case <-time.After(2 * time.Second):
				t.Fatal("upstream did not see its request cancelled within 2s of the client leaving")
			}
			<-errc
		})
	}
}

func newGateway(t *testing.T, ups ...gateway.Upstream) *httptestServer {
	srv := newHTTPTest(gateway.New(gateway.Options{Upstreams: ups}))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptestServer, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}
