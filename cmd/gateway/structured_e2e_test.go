package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// structuredSchema is the answer's schema in these tests: required string (at least one
// character, so the grammar must write one), integer, enum and array fields, and no
// other key.
const structuredSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":12},` +
	`"age":{"type":"integer"},` +
	`"color":{"type":"string","enum":["red","green","blue"]},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":8},"minItems":1,"maxItems":3}},` +
	`"required":["name","age","color","tags"],"additionalProperties":false}`

// structuredWeather is the tool beside the schema in the tools test.
const structuredWeather = `{"type":"object","properties":{"city":{"type":"string","maxLength":10}},"required":["city"],"additionalProperties":false}`

// structuredEngine starts llama-server with the tiny model biased toward the end of a
// turn and toward the quote, so that strings the grammar lets end do end: the random
// model writes garbage, and only the grammar makes it the schema's JSON.
func structuredEngine(t *testing.T) *enginetest.LlamaServer {
	t.Helper()
	dir, err := tinymodel.OllamaTokenizerDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := tinymodel.LoadVocab(dir)
	if err != nil {
		t.Fatal(err)
	}
	quote, ok := v.ID(`"`)
	if !ok {
		t.Fatal(`the tiny model has no token for "`)
	}
	return enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{
		Args: []string{"--logit-bias", fmt.Sprintf("%d+9", v.IMEnd), "--logit-bias", fmt.Sprintf("%d+4", quote)}})
}

func structuredGateway(t *testing.T, url string) string {
	t.Helper()
	base, _ := startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", url, 1), nil)
	return base
}

// chatStreamText reads a Chat Completions stream: its content and tool calls (name and
// arguments, joined from their deltas) and its finish reason.
func chatStreamText(t *testing.T, raw []byte) (string, [][2]string, string) {
	t.Helper()
	var content strings.Builder
	var calls [][2]string
	finish := ""
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int                              `json:"index"`
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, ch := range c.Choices {
			content.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, [2]string{})
				}
				calls[tc.Index][0] += tc.Function.Name
				calls[tc.Index][1] += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	return content.String(), calls, finish
}

// chatAnswer reads a whole Chat Completions answer.
func chatAnswer(t *testing.T, raw []byte) (string, [][2]string, string) {
	t.Helper()
	calls, finish := answerCalls(t, raw)
	var c struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	content := ""
	if c.Choices[0].Message.Content != nil {
		content = *c.Choices[0].Message.Content
	}
	return content, calls, finish
}

// TestStructuredOutputs_LlamaServer: response_format json_schema through the Chat
// Completions door, whole and streamed, on several seeds: the answer validates against
// the schema (the oracle is internal/schemacheck, written apart from the renderer), and
// the same request without response_format does not, so the grammar is what made it
// valid. json_object gives an object; Responses text.format and Messages
// output_config.format reach the same grammar; a keyword the grammar cannot hold is a
// 400 naming it.
func TestStructuredOutputs_LlamaServer(t *testing.T) {
	ls := structuredEngine(t)
	base := structuredGateway(t, ls.URL)
	rf := `{"type":"json_schema","json_schema":{"name":"person","strict":true,"schema":` + structuredSchema + `}}`
	chat := func(seed int, stream bool, format string) string {
		s := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"Describe a person as JSON."}],"seed":%d,"temperature":1,"max_tokens":400,"stream":%v`, seed, stream)
		if format != "" {
			s += `,"response_format":` + format
		}
		return s + `}`
	}
	for seed := 1; seed <= 4; seed++ {
		for _, stream := range []bool{false, true} {
			resp, raw := postJSON(t, base+"/v1/chat/completions", chat(seed, stream, rf))
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %d %s", seed, resp.StatusCode, raw)
			}
			read := chatAnswer
			if stream {
				read = chatStreamText
			}
			content, calls, finish := read(t, raw)
			if err := schemacheck.Validate([]byte(structuredSchema), []byte(content)); err != nil || finish != "stop" || len(calls) != 0 {
				t.Errorf("seed %d stream %v: %q (finish %s, calls %v) does not validate: %v", seed, stream, content, finish, calls, err)
			}
		}
	}
	// Without the grammar the random model writes garbage.
	_, raw := postJSON(t, base+"/v1/chat/completions", chat(1, false, ""))
	if content, _, _ := chatAnswer(t, raw); schemacheck.Validate([]byte(structuredSchema), []byte(content)) == nil {
		t.Errorf("without response_format the answer %q validates too: the test shows nothing", content)
	}
	// json_object: any object.
	_, raw = postJSON(t, base+"/v1/chat/completions", chat(2, false, `{"type":"json_object"}`))
	if content, _, _ := chatAnswer(t, raw); schemacheck.Validate([]byte(`{"type":"object","additionalProperties":true}`), []byte(content)) != nil {
		t.Errorf("json_object answer %q is not an object", content)
	}
	// A keyword the grammar cannot hold: 400 in the door's envelope, naming it.
	bad := strings.Replace(rf, `"age":{"type":"integer"}`, `"age":{"type":"integer","maximum":120}`, 1)
	resp, raw := postJSON(t, base+"/v1/chat/completions", chat(1, false, bad))
	var e struct {
		Error struct{ Type, Param, Message string } `json:"error"`
	}
	if json.Unmarshal(raw, &e); resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Param != "response_format" || !strings.Contains(e.Error.Message, `"maximum" at age`) {
		t.Errorf("unsupported keyword: %d %s", resp.StatusCode, raw)
	}

	// Responses text.format, whole and streamed.
	for _, stream := range []bool{false, true} {
		body := fmt.Sprintf(`{"model":"tiny","input":"Describe a person.","temperature":1,"max_output_tokens":400,"stream":%v,`+
			`"text":{"format":{"type":"json_schema","name":"person","strict":true,"schema":%s}}}`, stream, structuredSchema)
		resp, raw := postJSON(t, base+"/v1/responses", body)
		if resp.StatusCode != 200 {
			t.Fatalf("responses: %d %s", resp.StatusCode, raw)
		}
		text := responsesText(t, raw, stream)
		if err := schemacheck.Validate([]byte(structuredSchema), []byte(text)); err != nil {
			t.Errorf("responses stream %v: %q does not validate: %v", stream, text, err)
		}
	}
	// Messages output_config.format.
	resp, raw = postJSON(t, base+"/v1/messages", `{"model":"tiny","max_tokens":400,"messages":[{"role":"user","content":"Describe a person."}],`+
		`"output_config":{"format":{"type":"json_schema","schema":`+structuredSchema+`}}}`)
	var m struct {
		Content []struct{ Type, Text string } `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); resp.StatusCode != 200 || err != nil || len(m.Content) != 1 {
		t.Fatalf("messages: %d %s", resp.StatusCode, raw)
	}
	if err := schemacheck.Validate([]byte(structuredSchema), []byte(m.Content[0].Text)); err != nil {
		t.Errorf("messages: %q does not validate: %v", m.Content[0].Text, err)
	}
}

// responsesText is the output_text of a Responses answer, whole or streamed (its
// response.output_text.done).
func responsesText(t *testing.T, raw []byte, stream bool) string {
	t.Helper()
	if stream {
		for _, line := range strings.Split(string(raw), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var ev struct{ Type, Text string }
			if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_text.done" {
				return ev.Text
			}
		}
		t.Fatalf("no output_text.done in %s", raw)
	}
	var r struct {
		Output []struct {
			Type    string
			Content []struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	for _, o := range r.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				return c.Text
			}
		}
	}
	t.Fatalf("no output_text in %s", raw)
	return ""
}

// TestStructuredOutputs_LlamaServerWithTools: a schema beside tools the model may call:
// on every seed, whole and streamed, the output is a call of the allowed tool with
// arguments valid for it, or an answer valid for the schema, never anything else; over
// the seeds both come out. tool_choice required gives calls only. parallel_tool_calls is
// false: the random model would otherwise chain calls up to the token limit.
func TestStructuredOutputs_LlamaServerWithTools(t *testing.T) {
	ls := structuredEngine(t)
	base := structuredGateway(t, ls.URL)
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":` + structuredWeather + `}}]`
	rf := `{"type":"json_schema","json_schema":{"name":"person","strict":true,"schema":` + structuredSchema + `}}`
	var answers, calls int
	for seed := 1; seed <= 8; seed++ {
		for _, choice := range []string{"auto", "required"} {
			for _, stream := range []bool{false, true} {
				body := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"Weather or a person?"}],"tools":%s,"tool_choice":%q,"parallel_tool_calls":false,`+
					`"response_format":%s,"seed":%d,"temperature":1,"max_tokens":400,"stream":%v}`, tools, choice, rf, seed, stream)
				resp, raw := postJSON(t, base+"/v1/chat/completions", body)
				if resp.StatusCode != 200 {
					t.Fatalf("seed %d: %d %s", seed, resp.StatusCode, raw)
				}
				read := chatAnswer
				if stream {
					read = chatStreamText
				}
				content, cs, finish := read(t, raw)
				switch {
				case len(cs) > 0:
					for _, c := range cs {
						if err := schemacheck.Validate([]byte(structuredWeather), []byte(c[1])); c[0] != "get_weather" || err != nil {
							t.Errorf("seed %d %s stream %v: call %v: %v", seed, choice, stream, c, err)
						}
					}
					if content != "" || finish != "tool_calls" {
						t.Errorf("seed %d %s stream %v: content %q beside calls, finish %s", seed, choice, stream, content, finish)
					}
					calls++
				case choice == "required":
					t.Errorf("seed %d stream %v: tool_choice required answered %q", seed, stream, content)
				default:
					if err := schemacheck.Validate([]byte(structuredSchema), []byte(content)); err != nil || finish != "stop" {
						t.Errorf("seed %d stream %v: neither a call nor the schema's answer: %q (finish %s): %v", seed, stream, content, finish, err)
					}
					answers++
				}
			}
		}
	}
	t.Logf("%d calls, %d schema answers", calls, answers)
	if answers == 0 {
		t.Errorf("no seed answered in the schema beside optional calls: the alternation is not exercised")
	}
}
