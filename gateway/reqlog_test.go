package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
)

// TestRequestLog_MissReasons follows one thread through the reasons the gateway gives
// for a miss, over HTTP against an engine with a prefix cache of its own: the first
// request of a thread, a turn that extends the last (no miss), a turn whose loads change
// the tools under remove, an engine that lost its cache, and a catalog that changed.
func TestRequestLog_MissReasons(t *testing.T) {
	e := newFakeEngine(t,
		fakeReply{text: "first answer"},
		fakeReply{text: "second answer"},
		fakeReply{call: "search_tools", args: `{"query":"post a slack message SECRET-ARGS"}`},
		fakeReply{call: "load_tool", args: `{"toolName":"slack_send_message"}`},
		fakeReply{text: "loaded it"},
		fakeReply{text: "fourth answer"},
		fakeReply{text: "fifth answer"},
		fakeReply{text: "sixth answer"},
		fakeReply{text: "other thread"},
	)
	g := newOpsGateway(t, e, nil)
	turns := []string{"hello SECRET-PROMPT-1"}
	say := func(reply string, next string, tools string) *observe.RequestRecord {
		t.Helper()
		body := opsChat("m1", false, turns...)
		if tools != "" {
			body = strings.Replace(body, `"model":"m1"`, `"model":"m1","tools":`+tools, 1)
		}
		code, out := g.chat(t, body, "thread-a")
		if code != 200 {
			t.Fatalf("status %d: %s", code, out)
		}
		turns = append(turns, reply, next)
		return &g.requestLog(t, 1)[0]
	}
	check := func(what string, r *observe.RequestRecord, miss string) {
		t.Helper()
		if r.Miss != miss {
			t.Errorf("%s: miss %q, want %q (prompt %v cached %v)", what, r.Miss, miss, *r.PromptTokens, *r.CachedTokens)
		}
	}
	r := say("first answer", "and then SECRET-PROMPT-2", "")
	check("first request", r, observe.MissNewThread)
	if r.Key != "anonymous" || r.Model != "m1" || r.Backend != "vllm-a" || r.Strategy != "remove" || r.Door != "chat_completions" ||
		r.Profile != "default" || r.Status != 200 || r.Rounds != 1 || r.Thread == "" || len(r.CatalogVersion) != 64 || r.CacheSource != "reported" {
		t.Errorf("record %+v", r)
	}
	if *r.PromptTokens != *r.CachedTokens+*r.ComputedTokens || *r.CachedTokens != 0 {
		t.Errorf("tokens %d = %d + %d", *r.PromptTokens, *r.CachedTokens, *r.ComputedTokens)
	}

	r = say("second answer", "tell the team on slack", "")
	check("a turn that extends the last", r, "")
	if *r.CachedTokens == 0 {
		t.Errorf("the second turn was not cached: %+v", r)
	}

	r = say("loaded it", "thanks", "")
	check("a turn that loads a tool under remove", r, observe.MissLoadedSetChanged)
	if r.Rounds != 3 {
		t.Errorf("rounds %d, want 3", r.Rounds)
	}

	r = say("fourth answer", "more", "")
	check("a turn after the load", r, "")

	e.evict()
	r = say("fifth answer", "again", "")
	check("after the engine lost its cache", r, observe.MissEngineEvicted)

	extra := `[{"type":"function","function":{"name":"weather_lookup","description":"Weather for a city.","parameters":{"type":"object","properties":{}}}}]`
	r = say("sixth answer", "", extra)
	check("a catalog with a tool more", r, observe.MissCatalogChanged)

	// A thread the gateway has not seen, whose conversation began elsewhere: unknown.
	code, out := g.chat(t, opsChat("m1", false, "earlier", "an answer from before a restart", "now"), "thread-b")
	if code != 200 {
		t.Fatalf("status %d: %s", code, out)
	}
	if r := g.requestLog(t, 1)[0]; r.Miss != "" {
		t.Errorf("a thread seen elsewhere: miss %q", r.Miss)
	}

	// Refused requests are logged too, and a pass-through has no thread.
	code, _ = g.chat(t, `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, "")
	if code != 404 {
		t.Fatalf("unknown model: %d", code)
	}
	if r := g.requestLog(t, 1)[0]; r.Status != 404 || r.Backend != "none" || r.Model != "nope" || r.PromptTokens != nil {
		t.Errorf("refused: %+v", r)
	}

	all := g.requestLog(t, 100)
	if len(all) != 8 {
		t.Errorf("%d records, want 8", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Time.After(all[i-1].Time) {
			t.Errorf("not newest first at %d", i)
		}
	}
	// Never a prompt's, an answer's or an argument's words.
	var raw json.RawMessage
	g.admin(t, "/admin/requests?limit=100", &raw)
	for _, secret := range []string{"SECRET", "first answer", "slack message", "hello"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the request log holds %q: %s", secret, raw)
		}
	}
}

// TestRequestLog_BoundedAndLimited: the ring keeps RequestLog records, ?limit= takes the
// newest, a bad limit is a 400, and the log needs the admin key.
func TestRequestLog_BoundedAndLimited(t *testing.T) {
	e := newFakeEngine(t)
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) { o.RequestLog, o.Tools = 5, nil })
	for i := 0; i < 8; i++ {
		if code, out := g.chat(t, opsChat("m2", i%2 == 0, "hi"), ""); code != 200 {
			t.Fatalf("status %d: %s", code, out)
		}
	}
	if got := g.requestLog(t, 100); len(got) != 5 {
		t.Errorf("%d records kept, want 5", len(got))
	}
	got := g.requestLog(t, 2)
	if len(got) != 2 || got[0].Stream || !got[1].Stream {
		t.Errorf("limit 2: %+v", got)
	}
	if got[1].TTFTMS <= 0 || got[1].Rounds != 1 || got[1].Strategy != "eager" || got[1].Thread != "" {
		t.Errorf("a relayed stream: %+v", got[1])
	}
	if code := g.admin(t, "/admin/requests?limit=x", nil); code != 400 {
		t.Errorf("limit=x: %d", code)
	}
	resp, err := http.Get(g.URL + "/admin/requests")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("without the key: %d", resp.StatusCode)
	}
}
