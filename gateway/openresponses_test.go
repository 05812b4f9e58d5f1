package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Every response object and stream event the Responses door writes, whole, streamed and
// on the WebSocket, and /v1/responses/compact's answer, hold to the Open Responses
// specification's OpenAPI document (openresponses.org, version 2026-04-24): each member
// its schema requires, of the type it gives. The tables below are the required members
// of the schemas the door's output uses, read from that document; item, content and
// tool kinds the specification does not define (OpenAI's custom_tool_call,
// tool_search_call, namespace and custom tools) are OpenAI's and not checked.
//
// Two deliberate differences, both OpenAI's own wire: reasoning text streams as
// response.reasoning_text.delta/.done (the specification names them
// response.reasoning.delta/.done with the same members; the openai SDKs accumulate only
// OpenAI's names), and the error event carries code, message and param at its top, as
// OpenAI's does (the specification's ErrorPayload under "error" makes the openai SDKs
// end the stream before response.failed). The checker holds both to OpenAI's shape.

// orSchema is one schema: each required member and its kind: string, integer, number,
// boolean, array, object, any; "@Name" another schema; "[]@Name" an array of them;
// "|null" allows null.
type orSchema map[string]string

var openResponsesSchemas = map[string]orSchema{
	"ResponseResource": {"id": "string", "object": "string", "created_at": "integer", "completed_at": "integer|null",
		"status": "string", "incomplete_details": "@IncompleteDetails|null", "model": "string", "previous_response_id": "string|null",
		"instructions": "string|null", "output": "[]@Item", "error": "@Error|null", "tools": "[]@Tool", "tool_choice": "any",
		"truncation": "string", "parallel_tool_calls": "boolean", "text": "@TextField", "top_p": "number", "presence_penalty": "number",
		"frequency_penalty": "number", "top_logprobs": "integer", "temperature": "number", "reasoning": "@Reasoning|null",
		"usage": "@Usage|null", "max_output_tokens": "integer|null", "max_tool_calls": "integer|null", "store": "boolean",
		"background": "boolean", "service_tier": "string", "metadata": "any", "safety_identifier": "string|null",
		"prompt_cache_key": "string|null"},
	"IncompleteDetails":    {"reason": "string"},
	"Error":                {"code": "string", "message": "string"},
	"TextField":            {"format": "object"},
	"Reasoning":            {"effort": "string|null", "summary": "string|null"},
	"Usage":                {"input_tokens": "integer", "output_tokens": "integer", "total_tokens": "integer", "input_tokens_details": "@InputTokensDetails", "output_tokens_details": "@OutputTokensDetails"},
	"InputTokensDetails":   {"cached_tokens": "integer"},
	"OutputTokensDetails":  {"reasoning_tokens": "integer"},
	"Message":              {"type": "string", "id": "string", "status": "string", "role": "string", "content": "[]@Content"},
	"FunctionCall":         {"type": "string", "id": "string", "call_id": "string", "name": "string", "arguments": "string", "status": "string"},
	"ReasoningBody":        {"type": "string", "id": "string", "summary": "[]@Content"},
	"CompactionBody":       {"type": "string", "id": "string", "encrypted_content": "string"},
	"FunctionTool":         {"type": "string", "name": "string", "description": "string|null", "parameters": "object|null", "strict": "boolean|null"},
	"OutputTextContent":    {"type": "string", "text": "string", "annotations": "array"},
	"ReasoningTextContent": {"type": "string", "text": "string"},
	"InputTextContent":     {"type": "string", "text": "string"},
	"CompactResource":      {"id": "string", "object": "string", "output": "[]@Item", "created_at": "integer", "usage": "@Usage"},
	// Events.
	"ResponseEvent":       {"type": "string", "sequence_number": "integer", "response": "@ResponseResource"},
	"OutputItemEvent":     {"type": "string", "sequence_number": "integer", "output_index": "integer", "item": "@Item|null"},
	"ContentPartEvent":    {"type": "string", "sequence_number": "integer", "item_id": "string", "output_index": "integer", "content_index": "integer", "part": "@Content"},
	"TextDeltaEvent":      {"type": "string", "sequence_number": "integer", "item_id": "string", "output_index": "integer", "content_index": "integer", "delta": "string"},
	"TextDoneEvent":       {"type": "string", "sequence_number": "integer", "item_id": "string", "output_index": "integer", "content_index": "integer", "text": "string"},
	"ArgumentsDeltaEvent": {"type": "string", "sequence_number": "integer", "item_id": "string", "output_index": "integer", "delta": "string"},
	"ArgumentsDoneEvent":  {"type": "string", "sequence_number": "integer", "item_id": "string", "output_index": "integer", "arguments": "string"},
	"OpenAIErrorEvent":    {"type": "string", "sequence_number": "integer", "code": "string|null", "message": "string", "param": "string|null"},
}

// dispatch names the schema of a value of a union by its "type"; "" leaves it unchecked.
var openResponsesUnions = map[string]map[string]string{
	"Item":    {"message": "Message", "function_call": "FunctionCall", "reasoning": "ReasoningBody", "compaction": "CompactionBody"},
	"Content": {"output_text": "OutputTextContent", "reasoning_text": "ReasoningTextContent", "input_text": "InputTextContent"},
	"Tool":    {"function": "FunctionTool"},
	"Event": {
		"response.created": "ResponseEvent", "response.in_progress": "ResponseEvent", "response.completed": "ResponseEvent",
		"response.failed": "ResponseEvent", "response.incomplete": "ResponseEvent",
		"response.output_item.added": "OutputItemEvent", "response.output_item.done": "OutputItemEvent",
		"response.content_part.added": "ContentPartEvent", "response.content_part.done": "ContentPartEvent",
		"response.output_text.delta": "TextDeltaEvent", "response.output_text.done": "TextDoneEvent",
		"response.reasoning_text.delta": "TextDeltaEvent", "response.reasoning_text.done": "TextDoneEvent",
		"response.function_call_arguments.delta": "ArgumentsDeltaEvent", "response.function_call_arguments.done": "ArgumentsDoneEvent",
		"error": "OpenAIErrorEvent",
	},
}

// checkOpenResponses reports every way v (decoded JSON) departs from schema name, with
// its path.
func checkOpenResponses(name string, v any, path string) []string {
	if union, ok := openResponsesUnions[name]; ok {
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		typ, _ := obj["type"].(string)
		if s, ok := union[typ]; ok {
			return checkOpenResponses(s, v, path)
		}
		if name == "Event" {
			return []string{path + ": an event type the door should not write: " + typ}
		}
		return nil
	}
	sch, ok := openResponsesSchemas[name]
	if !ok {
		return []string{path + ": no schema " + name}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{path + ": not an object (" + name + ")"}
	}
	var errs []string
	keys := make([]string, 0, len(sch))
	for k := range sch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val, present := obj[k]
		if !present {
			errs = append(errs, fmt.Sprintf("%s: %s lacks required %q", path, name, k))
			continue
		}
		errs = append(errs, checkKind(sch[k], val, path+"."+k)...)
	}
	return errs
}

func checkKind(kind string, v any, path string) []string {
	kind, nullable := strings.CutSuffix(kind, "|null")
	if v == nil {
		if nullable || kind == "any" {
			return nil
		}
		return []string{path + ": null"}
	}
	if elem, ok := strings.CutPrefix(kind, "[]@"); ok {
		arr, ok := v.([]any)
		if !ok {
			return []string{path + ": not an array"}
		}
		var errs []string
		for i, e := range arr {
			errs = append(errs, checkOpenResponses(elem, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	}
	if ref, ok := strings.CutPrefix(kind, "@"); ok {
		return checkOpenResponses(ref, v, path)
	}
	ok := false
	switch kind {
	case "any":
		ok = true
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "array":
		_, ok = v.([]any)
	case "object":
		_, ok = v.(map[string]any)
	case "number":
		_, ok = v.(float64)
	case "integer":
		f, isNum := v.(float64)
		ok = isNum && f == float64(int64(f))
	}
	if !ok {
		return []string{fmt.Sprintf("%s: %v is not %s", path, v, kind)}
	}
	return nil
}

// holdsOpenResponses checks one JSON document against schema name.
func holdsOpenResponses(t *testing.T, name, doc, where string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Errorf("%s: %v in %s", where, err, doc)
		return
	}
	for _, e := range checkOpenResponses(name, v, where) {
		t.Error(e)
	}
}

// The checker itself fails what it should: a response without the members the
// specification added, a function tool without strict, a user message without its id.
func TestOpenResponsesChecker(t *testing.T) {
	var v any
	_ = json.Unmarshal([]byte(`{"type":"response.completed","sequence_number":3,"response":{"id":"r","object":"response","created_at":1,"completed_at":null,"status":"completed","incomplete_details":null,"model":"m","previous_response_id":null,"instructions":null,"output":[{"type":"message","role":"user","content":"hi"}],"error":null,"tools":[{"type":"function","name":"f","parameters":{}}],"tool_choice":"auto","truncation":"disabled","parallel_tool_calls":true,"text":{"format":{"type":"text"}},"top_p":1,"top_logprobs":0,"temperature":1,"reasoning":null,"usage":null,"max_output_tokens":null,"max_tool_calls":null,"store":true,"background":false,"metadata":{},"safety_identifier":null,"prompt_cache_key":null}}`), &v)
	got := strings.Join(checkOpenResponses("Event", v, "event"), "\n")
	for _, want := range []string{`lacks required "presence_penalty"`, `lacks required "frequency_penalty"`, `lacks required "service_tier"`,
		`event.response.tools[0]: FunctionTool lacks required "strict"`, `event.response.output[0]: Message lacks required "id"`,
		`event.response.output[0].content: not an array`} {
		if !strings.Contains(got, want) {
			t.Errorf("the checker missed %s:\n%s", want, got)
		}
	}
}

// thinkingReply is an engine's answer with reasoning, text and usage.
func thinkingReply(reasoning, text string) string {
	r, _ := json.Marshal(reasoning)
	c, _ := json.Marshal(text)
	return `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":` + string(r) +
		`,"content":` + string(c) + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

func cutReply(text string) string {
	c, _ := json.Marshal(text)
	return `{"id":"r","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":` + string(c) +
		`},"finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

func TestOpenResponses_DoorConforms(t *testing.T) {
	tools := `"tools":[{"type":"function","name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},` +
		`{"type":"function","name":"time","description":"Now.","parameters":{"type":"object"},"strict":false}]`
	bodies := []struct{ name, body, reply string }{
		{"reasoning and text", `{"model":"m1","input":"hi","temperature":0.2,"presence_penalty":0.5}`, thinkingReply("thinking", "Hello.")},
		{"a call", `{"model":"m1","input":"weather?",` + tools + `}`, callReply("call_1", "weather", `{"city":"Oslo"}`)},
		{"cut", `{"model":"m1","input":"long","max_output_tokens":16}`, cutReply("It was a dark")},
		{"failed", `{"model":"m1","input":"fail"}`, ""},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			replies := []string{}
			if b.reply != "" {
				replies = []string{b.reply, b.reply, b.reply}
			}
			sc := &scripted{replies: replies}
			gw := doorsWith(t, sc, nil)

			// Whole.
			status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, b.body)
			if b.reply != "" {
				if status != 200 {
					t.Fatalf("whole: %d %s", status, out)
				}
				holdsOpenResponses(t, "ResponseResource", out, "whole")
				id := idOf(t, out)
				if status, _, got := call(t, gw, "GET", "/v1/responses/"+id, aliceKey, ""); status != 200 {
					t.Errorf("GET: %d %s", status, got)
				} else {
					holdsOpenResponses(t, "ResponseResource", got, "GET")
				}
			}

			// Streamed.
			req, _ := http.NewRequest("POST", gw.URL+"/v1/responses", strings.NewReader(strings.Replace(b.body, "{", `{"stream":true,`, 1)))
			req.Header.Set("Authorization", "Bearer "+aliceKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			n := 0
			sr := bufio.NewScanner(resp.Body)
			sr.Buffer(make([]byte, 1<<20), 1<<20)
			for sr.Scan() {
				if data, ok := strings.CutPrefix(sr.Text(), "data: "); ok {
					holdsOpenResponses(t, "Event", data, fmt.Sprintf("stream[%d]", n))
					n++
				}
			}
			if n < 3 {
				t.Errorf("%d events streamed", n)
			}

			// On the socket.
			conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(gw.URL, "http")+"/v1/responses", http.Header{"Authorization": {"Bearer " + aliceKey}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.WriteMessage(websocket.TextMessage, []byte(strings.Replace(b.body, "{", `{"type":"response.create",`, 1)))
			for i := 0; ; i++ {
				_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, m, err := conn.ReadMessage()
				if err != nil {
					t.Fatal(err)
				}
				holdsOpenResponses(t, "Event", string(m), fmt.Sprintf("socket[%d]", i))
				var e struct{ Type string }
				_ = json.Unmarshal(m, &e)
				if e.Type == "response.completed" || e.Type == "response.incomplete" || e.Type == "response.failed" {
					break
				}
			}
		})
	}

	t.Run("compact", func(t *testing.T) {
		sc := &scripted{replies: []string{textReply("The user said hi.", 10, 0), textReply("The user said hi twice.", 10, 0)}}
		gw := doorsWith(t, sc, nil)
		for i, input := range []string{`"hi"`, `[{"role":"user","content":"hi"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]},{"role":"user","content":[{"type":"input_text","text":"hi again"}]}]`} {
			status, _, out := call(t, gw, "POST", "/v1/responses/compact", aliceKey, `{"model":"m1","input":`+input+`}`)
			if status != 200 {
				t.Fatalf("compact: %d %s", status, out)
			}
			holdsOpenResponses(t, "CompactResource", out, fmt.Sprintf("compact[%d]", i))
		}
	})
}
