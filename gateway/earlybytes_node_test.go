package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// Issue 25, through the official openai and @anthropic-ai/sdk packages (testdata/node,
// doors.mjs): the "maskgate" member that names dropped hosted tools, and an upstream
// failure after the early events.

// The SDKs parse an answer that carries the notice, and keep it where the caller reads
// it: on the response and message, whole and streamed (the stream's first event and the
// final object the SDK assembles).
func TestEarlyBytes_Node_HostedToolsNotice(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	t.Run("responses", func(t *testing.T) {
		gw := doorGateway(t, &scripted{replies: []string{textReply("No search here.", 5, 0), textReply("No search here.", 5, 0)}})
		code, out := runDoors(t, node, gw.URL, "responses-hosted")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["output_text"] != "No search here." || out["final_text"] != "No search here." {
			t.Errorf("answer %v", out)
		}
		for _, k := range []string{"whole", "created", "final"} {
			if d := dropped(out[k]); d != "web_search" {
				t.Errorf("%s: maskgate %v, want dropped_tools [web_search]", k, out[k])
			}
		}
	})
	t.Run("messages", func(t *testing.T) {
		gw := doorGateway(t, &scripted{replies: []string{textReply("No search here.", 5, 0), textReply("No search here.", 5, 0)}})
		code, out := runDoors(t, node, gw.URL, "messages-hosted")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["text"] != "No search here." {
			t.Errorf("answer %v", out)
		}
		for _, k := range []string{"whole", "start", "final"} {
			if d := dropped(out[k]); d != "web_search_20250305" {
				t.Errorf("%s: maskgate %v, want dropped_tools [web_search_20250305]", k, out[k])
			}
		}
	})
}

// dropped is a notice's dropped_tools, joined by commas.
func dropped(v any) string {
	m, _ := v.(map[string]any)
	return strings.Join(toStrings(m["dropped_tools"]), ",")
}

// An upstream that fails once the stream has begun with its early events: each SDK
// raises an error naming the failure, after the events it had.
func TestEarlyBytes_Node_UpstreamErrorAfterEarlyEvents(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	for _, c := range []struct{ scenario, first string }{
		{"responses-stream-error", "response.created"},
		{"messages-stream-error", "message_start"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			gw := doorGateway(t, &scripted{}) // no reply: the upstream answers 500
			code, out := runDoors(t, node, gw.URL, c.scenario)
			if code != 0 {
				t.Fatalf("exit %d: %v", code, out)
			}
			t.Logf("%v", out)
			types := toStrings(out["types"])
			if len(types) == 0 || types[0] != c.first {
				t.Errorf("events %v, want %s first", types, c.first)
			}
			if out["thrown"] == nil || !strings.Contains(out["message"].(string), "script exhausted") {
				t.Errorf("the SDK did not raise the upstream's failure: %v", out)
			}
		})
	}
}

// The SDKs read a stream with keep-alives in it (response.in_progress events on
// Responses, ping events on Messages) as the same answer: the upstream holds its answer for 2.5 s, the
// gateway's interval is 1 s.
func TestEarlyBytes_Node_KeepAlivesAreSkipped(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	for _, c := range []struct{ scenario, textKey string }{
		{"responses-stream", "output_text"},
		{"messages-stream", "text"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			u := newStalling(helloStream)
			up := newUpstream(t, u.reply)
			g := gatewayFor(t, up, keepalive(time.Second))
			go func() {
				<-u.arrived
				time.Sleep(2500 * time.Millisecond) // two keep-alives' worth of silence
				close(u.release)
			}()
			code, out := runDoors(t, node, g.URL, c.scenario)
			if code != 0 || out[c.textKey] != "hello" {
				t.Errorf("exit %d: %v", code, out)
			}
		})
	}
}
