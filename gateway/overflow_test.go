package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// overflowDoors are the three doors, each with a request that streams or not.
func overflowDoors(stream bool) []struct{ path, body string } {
	s := strconv.FormatBool(stream)
	long := strings.Repeat("long words ", 200)
	return []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"m1","stream":` + s + `,"messages":[{"role":"user","content":"` + long + `"}]}`},
		{"/v1/responses", `{"model":"m1","stream":` + s + `,"input":"` + long + `"}`},
		{"/v1/messages", `{"model":"m1","stream":` + s + `,"max_tokens":64,"messages":[{"role":"user","content":"` + long + `"}]}`},
	}
}

// checkOverflow holds a door's answer to the shape its own API gives a prompt past the
// context window: OpenAI's context_length_exceeded (Chat Completions, Responses), or
// Anthropic's "prompt is too long" (Messages), each a 400 before any output (a stream of
// Responses or Messages has begun already with its early events: checkOverflowEvent).
func checkOverflow(t *testing.T, path string, status int, body, engineMsg, anthropicMsg string) {
	t.Helper()
	if status != http.StatusBadRequest {
		t.Fatalf("%s: status %d, want 400; body %s", path, status, body)
	}
	if path == "/v1/messages" {
		want := `{"type":"error","error":{"type":"invalid_request_error","message":` + strconv.Quote(anthropicMsg) + `}}`
		if body != want {
			t.Errorf("%s: body\n got %s\nwant %s", path, body, want)
		}
		return
	}
	var env struct {
		Error map[string]*string `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("%s: body %s: %v", path, body, err)
	}
	want := map[string]string{"message": engineMsg, "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}
	if len(env.Error) != len(want) {
		t.Errorf("%s: error members %v, want exactly %v", path, env.Error, want)
	}
	for k, v := range want {
		if got := env.Error[k]; got == nil || *got != v {
			t.Errorf("%s: error.%s = %v, want %q (body %s)", path, k, got, v, body)
		}
	}
}

// checkOverflowEvent holds a Responses or Messages stream, begun with its early events
// before the engine refused the prompt, to the same refusal as its stream's error:
// Anthropic's error event with "prompt is too long", or the Responses API's error and
// response.failed events with context_length_exceeded (what Codex reads to compact).
func checkOverflowEvent(t *testing.T, path string, status int, body, engineMsg, anthropicMsg string) {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 and the early events; body %s", path, status, body)
	}
	want := []string{"event: error\ndata: " + `{"type":"error","error":{"type":"invalid_request_error","message":` + strconv.Quote(anthropicMsg) + `}}` + "\n\n"}
	if path == "/v1/responses" {
		want = []string{`"type":"error","sequence_number":2,"code":"context_length_exceeded","message":` + strconv.Quote(engineMsg) + `,"param":"messages"}`,
			"event: response.failed\n", `"error":{"code":"context_length_exceeded","message":` + strconv.Quote(engineMsg) + `}`}
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: no %s in\n%s", path, w, body)
		}
	}
}

// An engine's refusal of a prompt too long for its context window reaches each door in
// that door's own shape, so Codex and Claude Code compact instead of failing each turn.
func TestOverflow_EachEngineThroughEachDoor(t *testing.T) {
	t.Parallel()
	engines := []struct {
		name, body, msg, anthropic string
	}{
		{"llama-server", `{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it", "prompt is too long: 9000 tokens > 8192 maximum"},
		{"llama-server older", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			"the request exceeds the available context size, try increasing it", "prompt is too long: 9000 tokens > 8192 maximum"},
		{"vLLM", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please reduce the length of the input messages. None","type":"BadRequestError","param":null,"code":400}}`,
			"This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please reduce the length of the input messages. None", "prompt is too long: 9000 tokens > 8192 maximum"},
		{"vLLM max_tokens", `{"object":"error","message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 8192 tokens and your request has 2778 input tokens (8000 > 8192 - 2778). None","type":"BadRequestError","param":null,"code":400}`,
			"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 8192 tokens and your request has 2778 input tokens (8000 > 8192 - 2778). None",
			"input length and `max_tokens` exceed context limit: 2778 + 8000 > 8192, decrease input length or `max_tokens` and try again"},
		{"SGLang", `{"object":"error","message":"The input (9000 tokens) is longer than the model's context length (8192 tokens).","type":"BadRequestError","param":null,"code":400}`,
			"The input (9000 tokens) is longer than the model's context length (8192 tokens).", "prompt is too long: 9000 tokens > 8192 maximum"},
	}
	for _, e := range engines {
		gw := gatewayFor(t, newUpstream(t, replyJSON(http.StatusBadRequest, e.body)))
		for _, stream := range []bool{false, true} {
			for _, d := range overflowDoors(stream) {
				t.Run(fmt.Sprintf("%s%s stream=%v", e.name, d.path, stream), func(t *testing.T) {
					status, _, body := call(t, gw.Server, "POST", d.path, "", d.body)
					if stream && d.path != "/v1/chat/completions" {
						checkOverflowEvent(t, d.path, status, body, e.msg, e.anthropic)
						return
					}
					checkOverflow(t, d.path, status, body, e.msg, e.anthropic)
				})
			}
		}
	}
}

// The gateway's own budget guard says the same, sized by its estimate: a prompt past a
// 50-token window, and a max_tokens past what a short prompt leaves of it.
func TestOverflow_BudgetGuardThroughEachDoor(t *testing.T) {
	t.Parallel()
	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, replyJSON(http.StatusOK, completionJSON))
	gw := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {
		o.Tokens = counter
		o.Upstreams = []gateway.Upstream{{ContextWindow: 50}}
	})
	tooLong := regexp.MustCompile(`^prompt is too long: (\d+) tokens > 50 maximum$`)
	for _, stream := range []bool{false, true} {
		for _, d := range overflowDoors(stream) {
			status, _, body := call(t, gw.Server, "POST", d.path, "", d.body)
			if status != http.StatusBadRequest {
				t.Fatalf("%s: status %d, body %s", d.path, status, body)
			}
			if d.path == "/v1/messages" {
				var env struct {
					Type  string `json:"type"`
					Error struct{ Type, Message string }
				}
				_ = json.Unmarshal([]byte(body), &env)
				m := tooLong.FindStringSubmatch(env.Error.Message)
				if env.Type != "error" || env.Error.Type != "invalid_request_error" || m == nil {
					t.Fatalf("%s: body %s, want prompt is too long: N tokens > 50 maximum", d.path, body)
				}
				if n, _ := strconv.Atoi(m[1]); n < 200 { // 200 repetitions of two words
					t.Errorf("%s: prompt of %d tokens, want at least 200", d.path, n)
				}
				continue
			}
			var env struct {
				Error struct{ Type, Param, Code string }
			}
			_ = json.Unmarshal([]byte(body), &env)
			if env.Error.Type != "invalid_request_error" || env.Error.Param != "messages" || env.Error.Code != "context_length_exceeded" {
				t.Errorf("%s: body %s", d.path, body)
			}
		}
	}
	// A short prompt whose max_tokens asks for more than the window leaves.
	status, _, body := call(t, gw.Server, "POST", "/v1/messages", "", `{"model":"m1","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	roomy := regexp.MustCompile("^input length and `max_tokens` exceed context limit: (\\d+) \\+ 100 > 50, decrease input length or `max_tokens` and try again$")
	var env struct {
		Error struct{ Type, Message string }
	}
	_ = json.Unmarshal([]byte(body), &env)
	if status != http.StatusBadRequest || env.Error.Type != "invalid_request_error" || !roomy.MatchString(env.Error.Message) {
		t.Errorf("max_tokens past the window: status %d, body %s", status, body)
	}
	if b := up.lastBody(); b != nil {
		t.Errorf("a request reached the engine (%s); the guard should have refused them all", b)
	}
}
