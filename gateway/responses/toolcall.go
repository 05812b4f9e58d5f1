package responses

import (
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

// ToolCall adds one call the client must run: a function_call, or a custom_tool_call
// or tool_search_call when the name is a custom tool's or the client tool search's, or
// a shell_call, local_shell_call or apply_patch_call for a built-in (builtins.go).
func (w *Writer) ToolCall(c oai.ToolCall) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.begin(); err != nil {
		return err
	}
	if err := w.closeOpen("completed"); err != nil {
		return err
	}
	idx := len(w.items)
	callID := c.ID
	if callID == "" {
		callID = w.itemID("call_", idx)
	}
	name, args := c.Function.Name, c.Function.Arguments
	tn, ok := w.r.Names[name]
	if !ok {
		tn = ToolName{Kind: "function", Name: name}
	}
	it := &outItem{kind: tn.Kind}
	w.items = append(w.items, it)
	var added []byte
	var delta, doneEv, doneKey, doneVal string
	switch tn.Kind {
	case "custom":
		input := customInput(args)
		it.id = w.itemID("ctc_", idx)
		build := func(in string) []byte {
			o := newObj(len(in)+200).str("id", it.id).str("type", "custom_tool_call").str("call_id", callID)
			if tn.Namespace != "" {
				o.str("namespace", tn.Namespace)
			}
			return o.str("name", tn.Name).str("input", in).done()
		}
		added, it.final = build(""), build(input)
		delta, doneEv, doneKey, doneVal = "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "input", input
	case "tool_search":
		it.id = w.itemID("tsc_", idx)
		a := toolSearchArguments(args)
		build := func(status string) []byte {
			return newObj(len(a)+200).str("id", it.id).str("type", "tool_search_call").str("status", status).
				str("call_id", callID).str("execution", "client").raw("arguments", a).done()
		}
		added, it.final = build("in_progress"), build("completed")
	case "shell", "local_shell", "apply_patch":
		prefix := map[string]string{"shell": "sh_", "local_shell": "lsh_", "apply_patch": "apc_"}[tn.Kind]
		it.id = w.itemID(prefix, idx)
		var ok bool
		if it.final, ok = builtinItem(tn.Kind, it.id, callID, "completed", args); ok {
			added, _ = builtinItem(tn.Kind, it.id, callID, "in_progress", args)
			break
		}
		fallthrough // arguments not of the built-in's shape: a function_call the client can read
	default:
		it.kind = "function"
		it.id = w.itemID("fc_", idx)
		build := func(status, a string) []byte {
			o := newObj(len(a)+200).str("id", it.id).str("type", "function_call").str("status", status).
				str("arguments", a).str("call_id", callID)
			if tn.Namespace != "" {
				o.str("namespace", tn.Namespace)
			}
			return o.str("name", tn.Name).done()
		}
		added, it.final = build("in_progress", ""), build("completed", args)
		delta, doneEv, doneKey, doneVal = "response.function_call_arguments.delta", "response.function_call_arguments.done", "arguments", args
	}
	if err := w.emit("response.output_item.added", func(o *obj) { o.num("output_index", int64(idx)).raw("item", added) }); err != nil {
		return err
	}
	if doneEv != "" {
		if doneVal != "" {
			if err := w.emit(delta, func(o *obj) {
				o.str("item_id", it.id).num("output_index", int64(idx)).str("delta", doneVal)
			}); err != nil {
				return err
			}
		}
		if err := w.emit(doneEv, func(o *obj) {
			o.str("item_id", it.id).num("output_index", int64(idx)).str(doneKey, doneVal)
		}); err != nil {
			return err
		}
	}
	return w.emit("response.output_item.done", func(o *obj) { o.num("output_index", int64(idx)).raw("item", it.final) })
}

// customInput is a custom tool call's input: the "input" string of the chat arguments;
// for arguments the token limit cut inside that string ({"input": "*** Begin Pa), the
// text as far as it came; arguments of another shape are the input themselves.
func customInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) == nil && a.Input != nil {
		return *a.Input
	}
	if in, ok := cutInput(args); ok {
		return in
	}
	return args
}

// cutInput reads arguments cut inside the input string, as a model under a custom
// tool's grammar writes them: {, the key "input", a colon, an opening quote (JSON
// whitespace between them), then the string's characters up to where the text ends. An
// escape the cut left unfinished is dropped. It reports false for anything else,
// including a string that was closed (the arguments were then whole, or not this shape).
func cutInput(args string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(args, " \t\n\r"), "{")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), `"input"`)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), ":")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t\n\r"), `"`)
	if !ok {
		return "", false
	}
	// The longest prefix that is a whole run of characters and escapes, quoted, is a
	// JSON string; an unescaped quote means the string closed.
	end := 0
	for i := 0; i < len(rest); {
		switch c := rest[i]; {
		case c == '"':
			return "", false
		case c == '\\':
			n := 2
			if i+1 < len(rest) && rest[i+1] == 'u' {
				n = 6
			}
			if i+n > len(rest) {
				i = len(rest)
				continue
			}
			i += n
		default:
			i++
		}
		end = i
	}
	var s string
	if json.Unmarshal([]byte(`"`+rest[:end]+`"`), &s) != nil {
		return "", false
	}
	return s, true
}

// toolSearchArguments are a tool search call's arguments as the item carries them: the
// chat arguments' JSON object as it is, or, when they are not one, as a string.
func toolSearchArguments(args string) []byte {
	t := strings.TrimSpace(args)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return []byte(t)
	}
	return quote(args)
}
