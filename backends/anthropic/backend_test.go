package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
)

func TestChatCompletion_NonStreaming(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello!"}],`+
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":1500,"cache_read_input_tokens":0,"output_tokens":2}}`))
	b := newBackend(t, f.URL, Options{MaxTokens: 777})
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(hello), Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"chatcmpl-msg_01","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4-5-20250929","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop","logprobs":null}],` +
		`"usage":{"prompt_tokens":1503,"completion_tokens":2,"total_tokens":1505,"prompt_tokens_details":{"cached_tokens":0}}}`
	if diff := cmp.Diff(want, string(resp.Body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if resp.Stream != nil || resp.Cache != backends.CacheReported || resp.Header.Get("X-Request-Id") != "req_123" {
		t.Errorf("stream %v cache %q header %v", resp.Stream, resp.Cache, resp.Header)
	}
	wantReq := `{"model":"claude-sonnet-4-5","max_tokens":777,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`
	if diff := cmp.Diff(wantReq, string(f.lastBody())); diff != "" {
		t.Errorf("request Anthropic got (-want +got):\n%s", diff)
	}
}

func TestChatCompletion_UpstreamErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		retryAfter string
		wantStatus int
		wantType   string
		wantParam  string
		wantCode   string
		wantMsg    string
	}{
		{"invalid_request", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: empty"},"request_id":"req_1"}`, "",
			400, "invalid_request_error", "", "", "messages.0.content: empty"},
		{"bad_key_is_the_gateway's", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "",
			502, "upstream_error", "", "", "api_key_env"},
		{"forbidden", 403, `{"type":"error","error":{"type":"permission_error","message":"no access"}}`, "",
			502, "upstream_error", "", "", "no access"},
		{"unknown_model", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`, "",
			404, "invalid_request_error", "model", "model_not_found", "model: claude-9"},
		{"wrong_path", 404, `{"type":"error","error":{"type":"not_found_error","message":"Not Found"}}`, "",
			502, "upstream_error", "", "", "without /v1"},
		{"too_large", 413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, "",
			413, "invalid_request_error", "", "request_too_large", "maximum allowed"},
		{"rate_limited", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "17",
			429, "rate_limit_error", "", "", "slow down"},
		{"api_error", 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, "",
			502, "upstream_error", "", "", "Internal server error"},
		{"overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "30",
			503, "server_error", "", "upstream_overloaded", "Overloaded"},
		{"html_gateway_page", 502, `<html>bad gateway</html>`, "",
			502, "upstream_error", "", "", "bad gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("retry-after", tc.retryAfter)
				}
				jsonAnswer(tc.status, tc.body)(w, r)
			})
			b := newBackend(t, f.URL, Options{})
			for _, stream := range []bool{false, true} {
				body := hello
				if stream {
					body = streamBody(hello)
				}
				_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body), Stream: stream})
				be := asError(t, err)
				if be.Status != tc.wantStatus || be.Type != tc.wantType || be.Param != tc.wantParam || be.Code != tc.wantCode ||
					be.RetryAfter != tc.retryAfter || !strings.Contains(be.Message, tc.wantMsg) {
					t.Errorf("stream=%v: got %d %q param %q code %q retry %q msg %q", stream, be.Status, be.Type, be.Param, be.Code, be.RetryAfter, be.Message)
				}
			}
		})
	}
}

func TestChatCompletion_WrongKeyNeverReachesTheClientAs401(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{}`))
	b := newBackend(t, f.URL, Options{APIKey: "sk-wrong"})
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(hello)})
	if be := asError(t, err); be.Status != http.StatusBadGateway {
		t.Errorf("status %d, want 502", be.Status)
	}
}

func TestChatCompletion_SlowHeadersAre504(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	b := newBackend(t, f.URL, Options{Timeout: 50 * time.Millisecond})
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(hello)})
	if be := asError(t, err); be.Status != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", be.Status)
	}
}

func TestChatCompletion_CancelledClientIsNotAnUpstreamError(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{}`))
	b := newBackend(t, f.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(hello)})
	var be *backends.Error
	if errors.As(err, &be) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestChatCompletion_BadRequestNeverReachesAnthropic(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{}`))
	b := newBackend(t, f.URL, Options{})
	_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"n":3}`)})
	if be := asError(t, err); be.Status != 400 || be.Param != "n" {
		t.Errorf("got %d %q", be.Status, be.Param)
	}
	if f.lastBody() != nil {
		t.Error("a refused request was sent")
	}
}

func TestListModelsAndPing(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{}`))
	b := newBackend(t, f.URL, Options{})
	got, err := b.ListModels(background(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-haiku-20240307"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if err := b.Ping(background(t)); err != nil {
		t.Errorf("Ping = %v", err)
	}
	bad := newBackend(t, f.URL, Options{APIKey: "sk-wrong"})
	if err := bad.Ping(background(t)); err == nil {
		t.Error("Ping with a refused key succeeded")
	}
}

func TestNew_ValidatesOptions(t *testing.T) {
	for _, o := range []Options{
		{Name: "a"},
		{Name: "a", BaseURL: "api.anthropic.com"},
		{Name: "a", BaseURL: "https://api.anthropic.com/v1"},
		{Name: "a", BaseURL: "https://api.anthropic.com", MaxTokens: -1},
	} {
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), `"a"`) {
			t.Errorf("New(%+v) = %v, want an error naming the backend", o, err)
		}
	}
	b, err := New(Options{Name: "a", BaseURL: "https://api.anthropic.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if b.opt.Version != "2023-06-01" || b.opt.MaxTokens != 4096 || b.up.Base != "https://api.anthropic.com" {
		t.Errorf("defaults: %+v base %q", b.opt, b.up.Base)
	}
}
