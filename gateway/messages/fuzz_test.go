package messages

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// claudeCodeLike is a request shaped like the ones agents send: a billing header, cached
// system blocks, a tool catalog with server tools, thinking, tool use and results.
const claudeCodeLike = `{"model":"claude-sonnet-4-5-20250929","max_tokens":32000,"stream":true,
"metadata":{"user_id":"user_1_account__session_2"},"thinking":{"type":"enabled","budget_tokens":31999},
"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.101.e51; cc_entrypoint=cli; cch=a5145;"},
 {"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
"tools":[{"name":"Bash","description":"Run a command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}},
 {"name":"mcp__x__y","input_schema":{"type":"object"},"defer_loading":true},
 {"type":"web_search_20250305","name":"web_search","max_uses":8}],
"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>r</system-reminder>"},{"type":"text","text":"list files","cache_control":{"type":"ephemeral"}}]},
 {"role":"assistant","content":[{"type":"thinking","thinking":"I will run ls.","signature":"EqQB"},{"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_01A","name":"Bash","input":{"command":"ls"}}]},
 {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":[{"type":"text","text":"a.go\nb.go"}]},{"type":"text","text":"thanks"}]}]}`

func FuzzDecode(f *testing.F) {
	seeds := []string{
		claudeCodeLike,
		req(`[{"role":"user","content":"hi"}]`, `"system":"S"`),
		req(`[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]`),
		req(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":true,"content":[{"type":"tool_reference","tool_name":"t"},{"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"x"}]}]}]}]`),
		req(`[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"s","content":[]},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"t"}]}]`),
		req(`[{"role":"user","content":[{"type":"mid_conv_system","content":[{"type":"text","text":"s"}]},{"type":"text","text":"u"}]},{"role":"system","content":"in place"}]`),
		req(`[{"role":"user","content":"x"}]`, `"tools":[{"name":"f","input_schema":{}}]`, `"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true}`),
		req(`[{"role":"user","content":"x"}]`, `"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`, `"stop_sequences":["a"]`, `"temperature":1`, `"top_k":5`),
		`{"model":"m","messages":[{"role":"user","content":"count me"}]}`,
		`{"model":"m","max_tokens":1e3,"messages":[{"role":"user","content":"\ud83d\ude00\u0000"}]}`,
		`{}`, `[]`, `null`, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[]}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		r, err := Decode(body, Options{})
		if !bytes.Equal(body, orig) {
			t.Fatalf("Decode changed its input")
		}
		if err != nil {
			if err.Status != 400 || err.Type != "invalid_request_error" || err.Message == "" {
				t.Fatalf("error %+v", *err)
			}
			if err.Param != "" && !strings.HasPrefix(err.Message, err.Param+": ") {
				t.Fatalf("message %q does not name %q", err.Message, err.Param)
			}
			return
		}
		checkChatBody(t, r)
		first := r.ChatBody()
		again, err2 := Decode(body, Options{})
		if err2 != nil || !bytes.Equal(again.ChatBody(), first) {
			t.Fatalf("Decode is not deterministic")
		}
		// Refusing changes the outcome exactly when something was dropped.
		refused, err3 := Decode(body, Options{Hosted: HostedRefuse})
		dropped := len(r.Dropped) > 0 || r.DroppedBlocks > 0
		switch {
		case (err3 != nil) != dropped:
			t.Fatalf("refuse mode error %v, but dropped = %v (%q, %d blocks)", err3, dropped, r.Dropped, r.DroppedBlocks)
		case err3 == nil && !bytes.Equal(refused.ChatBody(), first):
			t.Fatalf("refuse mode gave another body")
		}
		// Whatever Decode takes, count_tokens takes.
		cr, err4 := DecodeCount(body, Options{})
		if err4 != nil {
			t.Fatalf("DecodeCount failed where Decode did not: %+v", *err4)
		}
		checkChatBody(t, cr)
	})
}

// bigRequest is an agent's late turn: 300 tools and 400 messages of tool use.
func bigRequest() []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"m","max_tokens":4096,"stream":true,"system":[{"type":"text","text":"` + strings.Repeat("system prompt ", 2000) + `","cache_control":{"type":"ephemeral"}}],"tools":[`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"tool_` + strconv.Itoa(i) + `","description":"` + strings.Repeat("does things ", 20) + `","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"a path"},"n":{"type":"integer"}},"required":["path"]}}`)
	}
	b.WriteString(`],"messages":[{"role":"user","content":"start"}`)
	for i := 0; i < 200; i++ {
		id := `"toolu_` + strconv.Itoa(i) + `"`
		b.WriteString(`,{"role":"assistant","content":[{"type":"thinking","thinking":"step","signature":"s"},{"type":"text","text":"calling"},{"type":"tool_use","id":` + id + `,"name":"tool_1","input":{"path":"/a/b","n":3}}]}`)
		b.WriteString(`,{"role":"user","content":[{"type":"tool_result","tool_use_id":` + id + `,"content":[{"type":"text","text":"` + strings.Repeat("output line\\n", 40) + `"}]}]}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func BenchmarkDecode(b *testing.B) {
	body := bigRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Decode(body, Options{})
		if err != nil {
			b.Fatal(err.Message)
		}
		_ = r.ChatBody()
	}
}
