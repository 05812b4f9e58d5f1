package gateway_test

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/nodetest"
)

// These tests drive the official openai and @anthropic-ai/sdk Node packages (pinned in
// testdata/node) through the Responses and Messages doors with testdata/node/doors.mjs,
// against a scripted Chat Completions upstream: what the SDKs parse is what the gateway
// translated.

// runDoors runs doors.mjs for scenario against the gateway at baseURL.
func runDoors(t *testing.T, node, baseURL, scenario string, env ...string) (int, map[string]any) {
	t.Helper()
	var out map[string]any
	code := runNodeScript(t, node, "doors.mjs", scenario, 60*time.Second, &out, append([]string{"BASE_URL=" + baseURL}, env...)...)
	return code, out
}

// doorGateway is a gateway in front of a scripted upstream, tools unmanaged.
func doorGateway(t *testing.T, sc *scripted) *httptest.Server { return scriptedGateway(t, sc, nil) }

func textReply(text string, prompt, cached int) string {
	q, _ := json.Marshal(text)
	u, _ := json.Marshal(map[string]any{"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3,
		"prompt_tokens_details": map[string]int{"cached_tokens": cached}})
	return `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":` +
		string(q) + `},"finish_reason":"stop"}],"usage":` + string(u) + `}`
}

func TestDoors_Node_Responses(t *testing.T) {
	node := nodetest.Node(t, nodeDir)

	t.Run("text", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("Hello from the engine.", 20, 16)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "responses-text")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["output_text"] != "Hello from the engine." || out["status"] != "completed" || !strings.HasPrefix(out["id"].(string), "resp_") {
			t.Errorf("summary %v", out)
		}
		u := out["usage"].(map[string]any)
		if u["input_tokens"] != 20.0 || u["cached_tokens"] != 16.0 || u["output_tokens"] != 3.0 {
			t.Errorf("usage %v", u)
		}
		var msgs []map[string]any
		if err := json.Unmarshal(sc.bodies[0]["messages"], &msgs); err != nil || len(msgs) != 1 || msgs[0]["role"] != "user" || msgs[0]["content"] != "say hello" {
			t.Errorf("upstream messages %s", sc.bodies[0]["messages"])
		}
		if string(sc.bodies[0]["max_completion_tokens"]) != "16" && string(sc.bodies[0]["max_tokens"]) != "16" {
			t.Errorf("max_output_tokens did not reach the engine: %v", sc.bodies[0])
		}
	})

	t.Run("stream", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("Hello from the engine.", 20, 16)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "responses-stream")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["output_text"] != "Hello from the engine." || out["deltas"] != "Hello from the engine." {
			t.Errorf("summary %v", out)
		}
		types := strings.Join(toStrings(out["types"]), " ")
		for _, want := range []string{"response.created", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"} {
			if !strings.Contains(types, want) {
				t.Errorf("no %s in %s", want, types)
			}
		}
		if !strings.HasPrefix(types, "response.created") || !strings.HasSuffix(types, "response.completed") {
			t.Errorf("event order %s", types)
		}
		if u := out["usage"].(map[string]any); u["cached_tokens"] != 16.0 {
			t.Errorf("usage %v", u)
		}
	})

	t.Run("tools, previous_response_id, retrieve, delete", func(t *testing.T) {
		sc := &scripted{replies: []string{callReply("call_1", "get_weather", `{"city":"Paris"}`), textReply("21 degrees.", 40, 30)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "responses-tools")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		first := out["first"].([]any)
		call := first[len(first)-1].(map[string]any)
		if call["type"] != "function_call" || call["name"] != "get_weather" || call["arguments"] != `{"city":"Paris"}` || call["call_id"] != "call_1" {
			t.Errorf("first output %v", first)
		}
		second := out["second"].([]any)
		if msg := second[0].(map[string]any); msg["text"] != "21 degrees." {
			t.Errorf("second output %v", second)
		}
		// The continuation's prompt is the first turn's, then the call and its output:
		// append-only.
		var msgs []map[string]any
		if err := json.Unmarshal(sc.bodies[1]["messages"], &msgs); err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 3 || msgs[0]["role"] != "user" || msgs[1]["role"] != "assistant" || msgs[2]["role"] != "tool" || msgs[2]["tool_call_id"] != "call_1" {
			t.Errorf("continuation messages %s", sc.bodies[1]["messages"])
		}
		if out["fetched_id"] == nil || out["deleted"] == nil {
			t.Errorf("retrieve/delete %v", out)
		}
	})

	t.Run("empty turn", func(t *testing.T) {
		// The engine answers nothing and tells no usage: the SDK still finds one
		// assistant message, its text "" (the OpenAI Agents SDK's final output), and a
		// usage of zeros, whole, streamed and on the socket. A socket's warm-up
		// (generate: false) stays without output.
		empty := `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`
		sc := &scripted{replies: []string{empty, empty, empty}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "responses-empty")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		for _, mode := range []string{"whole", "streamed", "socket"} {
			r, _ := out[mode].(map[string]any)
			b, _ := json.Marshal(r)
			output, _ := r["output"].([]any)
			if r["status"] != "completed" || r["output_text"] != "" || len(output) != 1 {
				t.Errorf("%s: %s", mode, b)
				continue
			}
			// The item as the SDK parsed it (its keys sorted here), the id apart; the
			// stream helper adds a "parsed" of null to each output_text part.
			item, _ := output[0].(map[string]any)
			id, _ := item["id"].(string)
			delete(item, "id")
			if mode == "streamed" {
				for _, p := range item["content"].([]any) {
					if part := p.(map[string]any); part["parsed"] == nil {
						delete(part, "parsed")
					}
				}
			}
			msg, _ := json.Marshal(item)
			if !regexp.MustCompile(`^msg_[0-9a-f]{48}$`).MatchString(id) ||
				string(msg) != `{"content":[{"annotations":[],"logprobs":[],"text":"","type":"output_text"}],"role":"assistant","status":"completed","type":"message"}` {
				t.Errorf("%s: item %q %s", mode, id, msg)
			}
			if u, _ := json.Marshal(r["usage"]); string(u) != `{"cached_tokens":0,"input_tokens":0,"output_tokens":0,"total_tokens":0}` {
				t.Errorf("%s: usage %s", mode, u)
			}
		}
		if got, want := strings.Join(toStrings(out["types"]), " "), "response.created response.in_progress response.output_item.added response.content_part.added "+
			"response.output_text.done response.content_part.done response.output_item.done response.completed"; got != want {
			t.Errorf("events %s\nwant   %s", got, want)
		}
		if w, _ := json.Marshal(out["warm_up"]); string(w) != `{"output":[],"type":"response.completed","usage":{"cached_tokens":0,"input_tokens":0,"output_tokens":0,"total_tokens":0}}` {
			t.Errorf("warm-up %s", w)
		}
		if len(sc.bodies) != 3 {
			t.Errorf("%d upstream calls, want 3 (the warm-up calls none)", len(sc.bodies))
		}
	})

	t.Run("websocket", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("One.", 20, 0), textReply("Two.", 30, 24)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "responses-ws")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["first"] != "response.completed" || out["second"] != "response.completed" || out["second_text"] != "Two." {
			t.Errorf("summary %v", out)
		}
		// The second turn sent only "again"; the socket supplied the first turn.
		var msgs []map[string]any
		if err := json.Unmarshal(sc.bodies[1]["messages"], &msgs); err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 3 || msgs[0]["content"] != "say hello" || msgs[1]["content"] != "One." || msgs[2]["content"] != "again" {
			t.Errorf("second turn's messages %s", sc.bodies[1]["messages"])
		}
	})
}

func TestDoors_Node_Messages(t *testing.T) {
	node := nodetest.Node(t, nodeDir)

	t.Run("text", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("Hello from the engine.", 20, 16)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "messages-text")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		content := out["content"].([]any)
		if out["type"] != "message" || out["stop_reason"] != "end_turn" || len(content) != 1 || content[0].(map[string]any)["text"] != "Hello from the engine." {
			t.Errorf("summary %v", out)
		}
		u := out["usage"].(map[string]any)
		if u["input_tokens"] != 4.0 || u["cache_read_input_tokens"] != 16.0 || u["output_tokens"] != 3.0 {
			t.Errorf("usage %v (input_tokens counts what was not cached)", u)
		}
	})

	t.Run("stream", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("Hello from the engine.", 20, 16)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "messages-stream")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		if out["text"] != "Hello from the engine." || out["deltas"] != "Hello from the engine." || out["stop_reason"] != "end_turn" {
			t.Errorf("summary %v", out)
		}
		types := strings.Join(toStrings(out["types"]), " ")
		if !strings.HasPrefix(types, "message_start") || !strings.HasSuffix(types, "message_delta message_stop") ||
			!strings.Contains(types, "content_block_start content_block_delta") || !strings.Contains(types, "content_block_stop") {
			t.Errorf("event order %s", types)
		}
		if u := out["usage"].(map[string]any); u["cache_read_input_tokens"] != 16.0 || u["output_tokens"] != 3.0 {
			t.Errorf("usage %v", u)
		}
	})

	t.Run("tools", func(t *testing.T) {
		sc := &scripted{replies: []string{callReply("toolu_1", "get_weather", `{"city":"Paris"}`), textReply("21 degrees.", 40, 30)}}
		gw := doorGateway(t, sc)
		code, out := runDoors(t, node, gw.URL, "messages-tools")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		use := out["tool_use"].(map[string]any)
		if out["stop_reason"] != "tool_use" || use["name"] != "get_weather" || use["input"].(map[string]any)["city"] != "Paris" || out["second_stop"] != "end_turn" {
			t.Errorf("summary %v", out)
		}
		var msgs []map[string]any
		if err := json.Unmarshal(sc.bodies[1]["messages"], &msgs); err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 3 || msgs[2]["role"] != "tool" || msgs[2]["tool_call_id"] != "toolu_1" {
			t.Errorf("second request's messages %s", sc.bodies[1]["messages"])
		}
	})

	t.Run("count_tokens", func(t *testing.T) {
		gw := doorGateway(t, &scripted{})
		code, out := runDoors(t, node, gw.URL, "messages-count")
		if code != 0 {
			t.Fatalf("exit %d: %v", code, out)
		}
		// "weather in Paris?" and the tool's JSON: more than a handful, fewer than the bytes.
		if n, _ := out["input_tokens"].(float64); n < 10 || n > 200 {
			t.Errorf("input_tokens %v", out["input_tokens"])
		}
	})

	t.Run("error envelope", func(t *testing.T) {
		gw := doorGateway(t, &scripted{})
		code, out := runDoors(t, node, gw.URL, "messages-error")
		e, _ := out["error"].(map[string]any)
		if code != 1 || e == nil || e["status"] != 404.0 || e["inner"] != "not_found_error" {
			t.Errorf("exit %d, %v: the SDK must read a 404 in Anthropic's envelope", code, out)
		}
	})
}

// TestDoors_Node_Models: the Anthropic SDK's models.list() (paged, both directions) and
// models.retrieve(), and the openai SDK's, read the gateway's models in their own shapes,
// and an unknown id is each SDK's 404.
func TestDoors_Node_Models(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	gw := scriptedGateway(t, &scripted{}, func(o *gateway.Options) { o.Upstreams[0].Models = []string{"m1", "m2", "m3"} })
	code, out := runDoors(t, node, gw.URL, "models")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, out)
	}
	got, _ := json.Marshal(out)
	want := `{"back":{"first_id":"m2","has_more":true,"ids":["m2"],"last_id":"m2"},` +
		`"ids":["m1","m2","m3"],` +
		`"missing":{"code":null,"status":404,"type":"not_found_error"},` +
		`"one":{"created_at":"1970-01-01T00:00:00Z","display_name":"m1","id":"m1","type":"model"},` +
		`"openai_ids":["m1","m2","m3"],` +
		`"openai_missing":{"code":"model_not_found","status":404,"type":"invalid_request_error"},` +
		`"openai_one":{"created":0,"id":"m1","object":"model","owned_by":"up"}}`
	if string(got) != want {
		t.Errorf("what the SDKs read\n got %s\nwant %s", got, want)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
