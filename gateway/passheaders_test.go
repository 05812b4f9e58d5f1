package gateway

import (
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/messages"
	"github.com/maskgate/maskgate/gateway/responses"
)

// The beta header filter passes only flags on the list, each whole, and accounts for
// every flag the client sent: kept or refused, none lost, none invented.
func FuzzFilterBeta(f *testing.F) {
	for _, seed := range []string{
		"responses=experimental", "responses=experimental, assistants=v2", "files-api-2025-04-14,prompt-caching-2024-07-31",
		" , ,prompt-caching-2024-07-31,,", "prompt-caching-2024-07-31\r\nX-Evil: 1", "PROMPT-CACHING-2024-07-31", "", ",",
		"prompt-caching-2024-07-31x", "\tresponses=v1\t",
	} {
		f.Add(seed, "responses=v1")
	}
	allowed := map[string]bool{}
	for _, flag := range DefaultBetaFlags {
		allowed[flag] = true
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		values := []string{a, b}
		kept, refused := filterBeta(values, allowed)
		var keptFlags []string
		if kept != "" {
			keptFlags = strings.Split(kept, ",")
		}
		for _, k := range keptFlags {
			if !allowed[k] {
				t.Fatalf("%q passed, not on the list (from %q)", k, values)
			}
		}
		for _, r := range refused {
			if allowed[r] || r == "" || strings.Contains(r, ",") {
				t.Fatalf("refused %q (from %q)", r, values)
			}
		}
		if want := betaFlags(values); len(keptFlags)+len(refused) != len(want) {
			t.Fatalf("%q: kept %q and refused %q, want the %d flags %q", values, keptFlags, refused, len(want), want)
		}
	})
}

func TestFilterBeta(t *testing.T) {
	allowed := map[string]bool{"a": true, "b": true}
	for _, c := range []struct {
		in      []string
		kept    string
		refused string
	}{
		{[]string{"a, c", "b"}, "a,b", "c"},
		{[]string{" , ,"}, "", ""},
		{[]string{"A", "a\r\nX: y"}, "", "A|a\r\nX: y"},
		{nil, "", ""},
	} {
		kept, refused := filterBeta(c.in, allowed)
		if kept != c.kept || strings.Join(refused, "|") != c.refused {
			t.Errorf("%q: kept %q refused %q, want %q and %q", c.in, kept, refused, c.kept, c.refused)
		}
	}
}

// The hosted-tools edit of a passed body never panics, keeps the body valid JSON, and
// leaves no hosted tool in its tools array.
func FuzzPassEdit(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","tools":[{"type":"mcp","server_url":"https://x"},{"type":"function","name":"f"}],"input":[{"type":"mcp_call"},{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`,
		`{"tools":[{"type":"m\u0063p"}],"input":"hi"}`,
		`{"tools":[{"type":"web_fetch_20250910"}],"mcp_servers":[{"url":"x"}],"container":"c","messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"f"}},{"type":"tool_result","content":[{"type":"image","source":{"type":"file"}}]}]}]}`,
		`{"tools":[],"input":[]}`, `{"tools":null}`, `{"input":[{"content":"x"}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !oai.Valid([]byte(body)) {
			return
		}
		for _, c := range []struct {
			edit   func([]byte, *passEdit) ([]byte, error)
			hosted func(el []byte) bool
		}{
			{passResponses, func(el []byte) bool {
				typ := strMember(el, "type")
				return responses.HostedTool(typ) && !(typ == "tool_search" && strMember(el, "execution") == "client")
			}},
			{passMessages, func(el []byte) bool { return messages.ServerTool(strMember(el, "type")) }},
		} {
			e := passEdit{}
			out, err := c.edit([]byte(body), &e)
			if err != nil {
				continue
			}
			if !oai.Valid(out) {
				t.Fatalf("%s became invalid JSON: %s", body, out)
			}
			tools, ok, _ := oai.Member(out, "tools")
			if !ok || len(tools) == 0 || tools[0] != '[' {
				continue
			}
			_ = oai.Elements(tools, func(el []byte) error {
				if c.hosted(el) {
					t.Fatalf("a hosted tool is left in %s (from %s)", out, body)
				}
				return nil
			})
		}
	})
}
