package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/responses"
	"github.com/maskgate/maskgate/masking/lark"
)

// Chat Completions custom tools ({"type":"custom","custom":{"name","description",
// "format"}}) take one free string and are called as {"type":"custom","custom":{"name",
// "input"}}. The pipeline and every engine know functions only, so the Chat door maps
// them as the Responses door maps its custom tools: a function taking {"input": string}
// whose input carries the tool's grammar, if it has one, under masking.GrammarKeyword
// (the engines' grammars and structural tags hold the string to the tool's language);
// tool_choice naming one names the function; an assistant's earlier custom calls in the
// history become function calls with {"input"} arguments. The answer's calls to those
// names go back to the client as custom calls (chatSink).

// chatCustomTools maps body's custom tools (tools, its raw tools array, as the envelope
// read it), its tool_choice and its history's custom calls; names are the custom tools'
// names (nil, with body unchanged, when there are none). A custom tool without a name,
// or whose grammar masking/lark cannot enforce, is a 400 naming it.
func chatCustomTools(body, tools []byte) ([]byte, map[string]bool, error) {
	if !bytes.Contains(tools, []byte(`"custom"`)) {
		return body, nil, nil
	}
	names := map[string]bool{}
	var out [][]byte
	i := 0
	err := oai.Elements(tools, func(t []byte) error {
		defer func() { i++ }()
		if typ, _ := oai.Get(t, "type"); string(typ) != `"custom"` {
			out = append(out, t)
			return nil
		}
		param := fmt.Sprintf("tools[%d].custom", i)
		c, ok := oai.Get(t, "custom")
		if !ok {
			return customError(param, "a custom tool needs its custom object: {\"name\", \"description\", \"format\"}")
		}
		name, ok := oai.Get(c, "name")
		var n string
		if !ok || json.Unmarshal(name, &n) != nil || n == "" {
			return customError(param+".name", "a custom tool needs a name")
		}
		params := []byte(responses.CustomParameters)
		if format, ok := oai.Get(c, "format"); ok && string(format) != "null" {
			p, err := customFormatParameters(format, param+".format")
			if err != nil {
				return err
			}
			params = p
		}
		var fn bytes.Buffer
		fn.WriteString(`{"type":"function","function":{"name":`)
		fn.Write(name)
		if desc, ok := oai.Get(c, "description"); ok && string(desc) != "null" {
			fn.WriteString(`,"description":`)
			fn.Write(desc)
		}
		fn.WriteString(`,"parameters":`)
		fn.Write(params)
		fn.WriteString(`}}`)
		out = append(out, fn.Bytes())
		names[n] = true
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return body, nil, nil
	}
	if body, err = oai.Set(body, "tools", joinArray(out)); err != nil {
		return nil, nil, err
	}
	if tc, ok := oai.Get(body, "tool_choice"); ok {
		if typ, _ := oai.Get(tc, "type"); string(typ) == `"custom"` {
			c, _ := oai.Get(tc, "custom")
			name, ok := oai.Get(c, "name")
			if !ok {
				return nil, nil, customError("tool_choice.custom.name", "a custom tool_choice names its tool")
			}
			if body, err = oai.Set(body, "tool_choice", []byte(`{"type":"function","function":{"name":`+string(name)+`}}`)); err != nil {
				return nil, nil, err
			}
		}
	}
	if msgs, ok := oai.Get(body, "messages"); ok && bytes.Contains(msgs, []byte(`"custom"`)) {
		mapped, err := customHistory(msgs)
		if err != nil {
			return nil, nil, err
		}
		if body, err = oai.Set(body, "messages", mapped); err != nil {
			return nil, nil, err
		}
	}
	return body, names, nil
}

// customFormatParameters are the parameters of a custom tool with format: text keeps a
// free string; a grammar ({"type":"grammar","grammar":{"syntax","definition"}}) is
// checked with masking/lark and carried on the input as the Responses door carries its
// own (responses.GrammarParameters), in the Responses API's shape that
// masking.GrammarKeyword takes, built from the client's own bytes.
func customFormatParameters(format []byte, param string) ([]byte, error) {
	var f struct {
		Type    string `json:"type"`
		Grammar *struct {
			Syntax     string `json:"syntax"`
			Definition string `json:"definition"`
		} `json:"grammar"`
	}
	if json.Unmarshal(format, &f) != nil {
		return nil, customError(param, "a custom tool's format is {\"type\": \"text\"} or {\"type\": \"grammar\", \"grammar\": {\"syntax\", \"definition\"}}")
	}
	switch f.Type {
	case "text":
		return []byte(responses.CustomParameters), nil
	case "grammar":
	default:
		return nil, customError(param+".type", fmt.Sprintf("unknown format type %q (text or grammar)", f.Type))
	}
	if f.Grammar == nil {
		return nil, customError(param+".grammar", "a grammar format needs its grammar: {\"syntax\": \"lark\" or \"regex\", \"definition\"}")
	}
	var err error
	switch f.Grammar.Syntax {
	case "lark":
		_, err = lark.Parse(f.Grammar.Definition)
	case "regex":
		_, err = lark.Regex(f.Grammar.Definition)
	default:
		return nil, customError(param+".grammar.syntax", fmt.Sprintf("unknown syntax %q (lark or regex)", f.Grammar.Syntax))
	}
	if err != nil {
		return nil, customError(param+".grammar.definition", fmt.Sprintf("the %s grammar is outside the subset this gateway enforces: %v", f.Grammar.Syntax, err))
	}
	g, _ := oai.Get(format, "grammar")
	syntax, _ := oai.Get(g, "syntax")
	def, _ := oai.Get(g, "definition")
	return responses.GrammarParameters([]byte(`{"type":"grammar","syntax":` + string(syntax) + `,"definition":` + string(def) + `}`)), nil
}

// customHistory maps the custom calls of the assistant messages in msgs to function
// calls whose arguments are {"input": input}; other messages keep their bytes.
func customHistory(msgs []byte) ([]byte, error) {
	var out [][]byte
	err := oai.Elements(msgs, func(m []byte) error {
		calls, ok := oai.Get(m, "tool_calls")
		if !ok || !bytes.Contains(calls, []byte(`"custom"`)) {
			out = append(out, m)
			return nil
		}
		var mapped [][]byte
		if err := oai.Elements(calls, func(c []byte) error {
			if typ, _ := oai.Get(c, "type"); string(typ) != `"custom"` {
				mapped = append(mapped, c)
				return nil
			}
			var call struct {
				ID     string `json:"id"`
				Custom struct {
					Name  string `json:"name"`
					Input string `json:"input"`
				} `json:"custom"`
			}
			if json.Unmarshal(c, &call) != nil {
				return customError("messages", "a custom tool call is {\"id\", \"type\": \"custom\", \"custom\": {\"name\", \"input\"}}")
			}
			args := marshalLiteral(map[string]string{"input": call.Custom.Input})
			b, _ := json.Marshal(oai.ToolCall{ID: call.ID, Type: "function", Function: oai.FunctionCall{Name: call.Custom.Name, Arguments: string(args)}})
			mapped = append(mapped, b)
			return nil
		}); err != nil {
			return err
		}
		m, err := oai.Set(m, "tool_calls", joinArray(mapped))
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return joinArray(out), nil
}

// customCall is a call to a custom tool as the Chat Completions API writes it: the
// function call's {"input"} argument given back as the custom call's input.
func customCall(tc oai.ToolCall, index *int) []byte {
	var args struct {
		Input string `json:"input"`
	}
	input := tc.Function.Arguments
	if json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
		input = args.Input
	}
	type custom struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	}
	b, _ := json.Marshal(struct {
		Index  *int   `json:"index,omitempty"`
		ID     string `json:"id,omitempty"`
		Type   string `json:"type"`
		Custom custom `json:"custom"`
	}{index, tc.ID, "custom", custom{tc.Function.Name, input}})
	return b
}

// customWhole maps the calls to custom tools in a whole chat.completion body.
func customWhole(body []byte, names map[string]bool) ([]byte, error) {
	var r struct {
		Choices []struct {
			Message struct {
				ToolCalls []oai.ToolCall `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if len(names) == 0 || json.Unmarshal(body, &r) != nil || len(r.Choices) != 1 || len(r.Choices[0].Message.ToolCalls) == 0 {
		return body, nil
	}
	choices, _ := oai.Get(body, "choices")
	var choice []byte
	_ = oai.Elements(choices, func(c []byte) error { choice = c; return nil })
	msg, _ := oai.Get(choice, "message")
	calls := make([][]byte, len(r.Choices[0].Message.ToolCalls))
	for i, tc := range r.Choices[0].Message.ToolCalls {
		if names[tc.Function.Name] {
			calls[i] = customCall(tc, nil)
		} else {
			calls[i], _ = json.Marshal(tc)
		}
	}
	msg, err := oai.Set(msg, "tool_calls", joinArray(calls))
	if err != nil {
		return nil, err
	}
	if choice, err = oai.Set(choice, "message", msg); err != nil {
		return nil, err
	}
	return oai.Set(body, "choices", joinArray([][]byte{choice}))
}

// marshalLiteral is v as JSON without HTML escapes: arguments reach the prompt as the
// model would write them ("<" as itself, not \u003c).
func marshalLiteral(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func joinArray(items [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']')
}

func customError(param, msg string) error {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "invalid_value", Message: msg}
}
