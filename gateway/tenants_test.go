package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/state"
)

// The tenant tests run one gateway with a managed catalog in front of a planting
// upstream: a user message "plant SECRET TOOL" is answered with a hidden meta-tool
// exchange — search_tools for SECRET and load_tool for TOOL — that the gateway keeps
// for the thread and splices into the thread's next prompt; anything else is answered
// "ok". What each upstream call received is recorded, so a test can see which secrets
// and tools reached which caller's prompt.

// secretRE finds planted secrets: SECRET-identity-number.
var secretRE = regexp.MustCompile(`SECRET-[a-z]+-[0-9]+`)

// planter is the upstream; calls[i] is the i-th request body it received.
type planter struct {
	*httptest.Server
	mu    sync.Mutex
	calls []upstreamCall
}

type upstreamCall struct {
	body    string
	tools   []string          // tool names in the request, meta-tools included
	descs   map[string]string // tool name → description
	secrets []string          // planted secrets anywhere in the body
}

func newPlanter(t testing.TB) *planter {
	p := &planter{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Tools []struct {
				Function struct {
					Name        string `json:"name"`
					Description string `json:"description"`
				} `json:"function"`
			} `json:"tools"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", 400)
			return
		}
		c := upstreamCall{body: string(raw), descs: map[string]string{}, secrets: secretRE.FindAllString(string(raw), -1)}
		for _, tl := range req.Tools {
			c.tools = append(c.tools, tl.Function.Name)
			c.descs[tl.Function.Name] = tl.Function.Description
		}
		p.mu.Lock()
		p.calls = append(p.calls, c)
		p.mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		var text string
		_ = json.Unmarshal(last.Content, &text)
		w.Header().Set("Content-Type", "application/json")
		if f := strings.Fields(text); last.Role == "user" && len(f) == 3 && f[0] == "plant" {
			io.WriteString(w, twoCalls(`{"query":"`+f[1]+`"}`, `{"toolName":"`+f[2]+`"}`))
			return
		}
		io.WriteString(w, `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *planter) n() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

func (p *planter) since(i int) []upstreamCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]upstreamCall(nil), p.calls[i:]...)
}

func twoCalls(searchArgs, loadArgs string) string {
	s, _ := json.Marshal(searchArgs)
	l, _ := json.Marshal(loadArgs)
	return `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"c1","type":"function","function":{"name":"search_tools","arguments":` + string(s) + `}},` +
		`{"id":"c2","type":"function","function":{"name":"load_tool","arguments":` + string(l) + `}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

// identities of the tenant tests, and their keys.
var tenantKeys = map[string]string{"alice": aliceKey, "bob": bobKey, "carol": carolKey}

// ownedCatalog has 8 tools per identity, named identity_tool_NN: a tool in a caller's
// prompt that is not its own crossed identities.
func ownedCatalog(t testing.TB) *toolsearch.Index {
	t.Helper()
	var defs []string
	for _, who := range []string{"alice", "bob", "carol"} {
		for i := range 8 {
			defs = append(defs, fmt.Sprintf(`{"type":"function","function":{"name":"%s_tool_%02d","description":"tool %d of %s","parameters":{"type":"object","properties":{}}}}`, who, i, i, who))
		}
	}
	tools, err := toolsearch.ParseTools([]byte("["+strings.Join(defs, ",")+"]"), "owned.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return toolsearch.NewIndex(cat, toolsearch.Options{})
}

// tenantGateway is the gateway of the tenant tests: keys (nil: anonymous), the owned
// catalog under remove (loaded tools are visible in the prompt), server-mode meta-tools.
func tenantGateway(t testing.TB, p *planter, keys *tenant.Keyring, fingerprint bool, mutate ...func(*gateway.Server)) *httptest.Server {
	t.Helper()
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: p.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(gateway.Options{
		Upstreams:          []gateway.Upstream{{Name: "up", Models: []string{"*"}, Backend: be}},
		Tools:              ownedCatalog(t),
		State:              state.NewMemory(state.Options{}),
		Strategy:           gateway.StrategyRemove,
		Keys:               keys,
		FingerprintThreads: fingerprint,
		// The isolation tests model which tools each thread loaded, a client's own
		// included: its tools are managed, loaded by search like the profile's.
		ClientTools: gateway.ClientToolsManaged,
	})
	for _, m := range mutate {
		m(gw)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv
}

// clientTools are a caller's own tools for one request: one unique to it, and one whose
// name every identity uses, with a description only it sends.
func clientTools(who string) string {
	return fmt.Sprintf(`[{"type":"function","function":{"name":"cli_%s_own","description":"only %s sends this"}},`+
		`{"type":"function","function":{"name":"cli_shared","description":"cli_shared as %s declares it"}}]`, who, who, who)
}

// chatBody is a chat request: messages (JSON objects), the caller's client tools, and
// extra members (each `"key":value`).
func chatBody(msgs []string, tools string, extra ...string) string {
	b := `{"model":"m1","messages":[` + strings.Join(msgs, ",") + `]`
	if tools != "" {
		b += `,"tools":` + tools
	}
	for _, e := range extra {
		b += "," + e
	}
	return b + "}"
}

func userMsg(s string) string      { return `{"role":"user","content":` + jsonString(s) + `}` }
func systemMsg(s string) string    { return `{"role":"system","content":` + jsonString(s) + `}` }
func assistantMsg(s string) string { return `{"role":"assistant","content":` + jsonString(s) + `}` }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
