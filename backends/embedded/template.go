//go:build llamacpp

package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ardanlabs/jinja"
	"github.com/ollama/ollama/fs/ggml"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// readChatTemplate returns tokenizer.chat_template from a GGUF file's metadata.
func readChatTemplate(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Arrays (the vocabulary) are skipped: only the template string is needed.
	g, err := ggml.Decode(f, 0)
	if err != nil {
		return "", fmt.Errorf("read GGUF metadata of %s: %w", path, err)
	}
	tmpl := g.KV().ChatTemplate()
	if tmpl == "" {
		return "", fmt.Errorf("%s has no tokenizer.chat_template; use a GGUF with a chat template", path)
	}
	return tmpl, nil
}

// chatTemplate renders a conversation into the prompt text the model was trained on.
type chatTemplate struct {
	t *jinja.Template
}

func compileTemplate(src string) (*chatTemplate, error) {
	t, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("compile chat template: %w", err)
	}
	return &chatTemplate{t: t}, nil
}

// render returns the prompt for messages and tools, ending with the assistant's turn
// opening (add_generation_prompt). With catalogFirst the tools are laid out ahead of the
// client's system prompt where format's templates allow it (see catalogFirstLayout).
func (c *chatTemplate) render(msgs []oai.Message, tools []oai.Tool, format string, catalogFirst bool) (string, error) {
	return c.renderWith(msgs, tools, format, catalogFirst, templateExtra{})
}

// renderWith is render with what the messages' struct does not hold: their reasoning
// and the template variables of the client's reasoning switch.
func (c *chatTemplate) renderWith(msgs []oai.Message, tools []oai.Tool, format string, catalogFirst bool, x templateExtra) (string, error) {
	llama3 := false
	if catalogFirst && len(tools) > 0 {
		n := len(msgs)
		if msgs, llama3 = catalogFirstLayout(msgs, format); len(msgs) > n && len(x.reasoning) > 0 {
			x.reasoning = append([]string{""}, x.reasoning...) // the empty system message put first
		}
	}
	list := make([]jinja.Value, 0, len(msgs))
	for i := range msgs {
		v, err := messageValue(&msgs[i])
		if err != nil {
			return "", fmt.Errorf("messages[%d]: %w", i, err)
		}
		if i < len(x.reasoning) && x.reasoning[i] != "" {
			v.AsDict().Set("reasoning_content", jinja.NewString(x.reasoning[i]))
		}
		list = append(list, v)
	}
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(list),
		"add_generation_prompt": jinja.NewBool(true),
		"bos_token":             jinja.NewString(""),
		"eos_token":             jinja.NewString(""),
	}
	for k, v := range x.vars {
		data[k] = v
	}
	if llama3 {
		data["tools_in_user_message"] = jinja.NewBool(false)
	}
	if len(tools) > 0 {
		tl := make([]jinja.Value, 0, len(tools))
		for i := range tools {
			raw, err := json.Marshal(tools[i]) // struct field order, Parameters as the client wrote them
			if err != nil {
				return "", fmt.Errorf("tools[%d]: %w", i, err)
			}
			v, err := jsonValue(raw)
			if err != nil {
				return "", fmt.Errorf("tools[%d]: %w", i, err)
			}
			tl = append(tl, v)
		}
		data["tools"] = jinja.NewList(tl)
	}
	out, err := c.t.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("render chat template: %w", err)
	}
	return out, nil
}

// catalogFirstLayout is llama-server's catalog-first layout (backends/llamacpp,
// catalogFirstMessages) for the embedded engine: under Hermes a leading non-empty system
// message moves behind an empty one, so the template writes the tools first and the
// client's system text as a turn of its own after them; under Llama 3.x the template is
// told tools_in_user_message=false, which writes the tools into the system turn ahead of
// the system prompt. Other formats keep their template's order.
func catalogFirstLayout(msgs []oai.Message, format string) (out []oai.Message, llama3 bool) {
	switch format {
	case toolcall.Llama3:
		return msgs, true
	case toolcall.Hermes:
		if len(msgs) == 0 || msgs[0].Role != "system" {
			return msgs, false
		}
		if text, err := msgs[0].TextContent(); err != nil || text == "" {
			return msgs, false
		}
		out = make([]oai.Message, 0, len(msgs)+1)
		out = append(out, oai.Message{Role: "system", Content: json.RawMessage(`""`)})
		return append(out, msgs...), false
	}
	return msgs, false
}

// messageValue converts a message the way llama-server does for templates: content as
// text, tool call arguments as an object when they are one (templates apply tojson).
func messageValue(m *oai.Message) (jinja.Value, error) {
	text, err := m.TextContent()
	if err != nil {
		return jinja.Value{}, fmt.Errorf("content: %w", err)
	}
	d := jinja.NewDict()
	dict := d.AsDict()
	dict.Set("role", jinja.NewString(m.Role))
	dict.Set("content", jinja.NewString(text))
	if m.Name != "" {
		dict.Set("name", jinja.NewString(m.Name))
	}
	if m.ToolCallID != "" {
		dict.Set("tool_call_id", jinja.NewString(m.ToolCallID))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, 0, len(m.ToolCalls))
		for _, tc := range m.ToolCalls {
			args := jinja.NewString(tc.Function.Arguments)
			if v, err := jsonValue([]byte(tc.Function.Arguments)); err == nil && v.IsDict() {
				args = v
			}
			fn := jinja.NewDict()
			fn.AsDict().Set("name", jinja.NewString(tc.Function.Name))
			fn.AsDict().Set("arguments", args)
			call := jinja.NewDict()
			call.AsDict().Set("id", jinja.NewString(tc.ID))
			call.AsDict().Set("type", jinja.NewString("function"))
			call.AsDict().Set("function", fn)
			calls = append(calls, call)
		}
		dict.Set("tool_calls", jinja.NewList(calls))
	}
	return d, nil
}

// jsonValue decodes JSON into template values, keeping object keys in the order they were
// written: tojson then reproduces the client's order, and so the same prompt bytes.
func jsonValue(raw []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Value{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jinja.Value{}, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jinja.Value{}, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				d.AsDict().Set(k.(string), v)
			}
			_, err := dec.Token() // '}'
			return d, err
		case '[':
			var items []jinja.Value
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, v)
			}
			_, err := dec.Token() // ']'
			return jinja.NewList(items), err
		}
		return jinja.Value{}, fmt.Errorf("unexpected %v", t)
	default:
		return jinja.FromGoValue(t), nil // string, bool, json.Number, nil
	}
}
