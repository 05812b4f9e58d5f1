package responses

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/gateway/door"
)

// The client-executed built-in tools: shell, local_shell and apply_patch are declared by
// type alone, OpenAI's models call them with items of their own (shell_call,
// local_shell_call, apply_patch_call), and the client runs them (the OpenAI Agents SDK's
// shellTool and applyPatchTool, the AI SDK's openai.tools.shell and
// openai.tools.applyPatch, Codex) and sends back their outputs. The engine gets each as a
// chat function of the type's name whose parameters are the call's action (or
// operation); its call becomes the built-in's item, and history's items become the chat
// call and tool message again. apply_patch's diff is held to the V4A diff grammar (the
// hunk part of Codex's apply_patch grammar: context and change lines).

// builtinTools are the client-executed built-in tool types.
var builtinTools = map[string]bool{"shell": true, "local_shell": true, "apply_patch": true}

// applyPatchDiffGrammar is the language of an apply_patch operation's diff: one file's
// V4A diff, the hunks of Codex's apply_patch grammar (masking/lark's testdata) without
// the envelope and file headers, which the operation's type and path carry.
const applyPatchDiffGrammar = `start: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF
%import common.LF`

// builtinParameters are the chat function parameters of each built-in.
var builtinParameters = map[string]string{
	"shell": `{"type":"object","properties":{"commands":{"type":"array","items":{"type":"string"},"description":"Shell commands to run, in order."},` +
		`"timeout_ms":{"type":"integer","description":"The most milliseconds the commands may run."}},"required":["commands"],"additionalProperties":false}`,
	"local_shell": `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"},"description":"The command and its arguments."},` +
		`"working_directory":{"type":"string"},"timeout_ms":{"type":"integer"}},"required":["command"],"additionalProperties":false}`,
	"apply_patch": `{"type":"object","properties":{"type":{"type":"string","enum":["create_file","update_file","delete_file"]},` +
		`"path":{"type":"string","description":"The file's path, relative to the workspace."},` +
		`"diff":{"type":"string","description":"The V4A diff: for create_file every line starts with +; for update_file, @@ context lines and lines starting with space, - or +.","x-grammar":` +
		string(mustQuoteGrammar()) + `}},"required":["type","path"],"additionalProperties":false}`,
}

func mustQuoteGrammar() []byte {
	return newObj(len(applyPatchDiffGrammar)+64).str("type", "grammar").str("syntax", "lark").str("definition", applyPatchDiffGrammar).done()
}

var builtinDescriptions = map[string]string{
	"shell":       "Run shell commands on the user's machine and read their output.",
	"local_shell": "Run a command on the user's machine and read its output.",
	"apply_patch": "Create, update or delete one file with a V4A diff.",
}

// builtin is the chat function a built-in tool of type typ becomes.
func builtin(typ, param string) chatTool {
	fn := newObj(512).str("name", typ).str("description", builtinDescriptions[typ]).raw("parameters", []byte(builtinParameters[typ])).done()
	return chatTool{
		name:  typ,
		def:   newObj(len(fn)+32).str("type", "function").raw("function", fn).done(),
		kind:  ToolName{Kind: typ, Name: typ},
		param: param,
	}
}

// builtinItem is the output item of a call of built-in kind with the chat arguments
// args, status given; false when the arguments are not the built-in's shape (the call
// then stays a function_call).
func builtinItem(kind, id, callID, status, args string) ([]byte, bool) {
	switch kind {
	case "shell":
		var a struct {
			Commands  []string `json:"commands"`
			TimeoutMS *int64   `json:"timeout_ms"`
		}
		if json.Unmarshal([]byte(args), &a) != nil || a.Commands == nil {
			return nil, false
		}
		// timeout_ms only when the model wrote one, max_output_length never: OpenAI's
		// types allow null for both, but @langchain/openai's tools.shell takes each as an
		// optional number and refuses null.
		action := newObj(len(args)+64).raw("commands", mustJSON(a.Commands))
		if a.TimeoutMS != nil {
			action.num("timeout_ms", *a.TimeoutMS)
		}
		return newObj(len(args)+200).str("id", id).str("type", "shell_call").str("status", status).str("call_id", callID).
			raw("action", action.done()).raw("environment", []byte("null")).done(), true
	case "local_shell":
		var a struct {
			Command    []string `json:"command"`
			WorkingDir *string  `json:"working_directory"`
			TimeoutMS  *int64   `json:"timeout_ms"`
		}
		if json.Unmarshal([]byte(args), &a) != nil || a.Command == nil {
			return nil, false
		}
		action := newObj(len(args)+64).str("type", "exec").raw("command", mustJSON(a.Command)).raw("env", []byte("{}"))
		if a.TimeoutMS != nil {
			action.num("timeout_ms", *a.TimeoutMS)
		}
		if a.WorkingDir != nil {
			action.str("working_directory", *a.WorkingDir)
		}
		return newObj(len(args)+200).str("id", id).str("type", "local_shell_call").str("status", status).str("call_id", callID).
			raw("action", action.done()).done(), true
	case "apply_patch":
		var a struct {
			Type string  `json:"type"`
			Path string  `json:"path"`
			Diff *string `json:"diff"`
		}
		if json.Unmarshal([]byte(args), &a) != nil || a.Path == "" {
			return nil, false
		}
		op := newObj(len(args)+64).str("type", a.Type).str("path", a.Path)
		switch a.Type {
		case "create_file", "update_file":
			if a.Diff == nil {
				return nil, false
			}
			op.str("diff", *a.Diff)
		case "delete_file":
		default:
			return nil, false
		}
		return newObj(len(args)+200).str("id", id).str("type", "apply_patch_call").str("status", status).str("call_id", callID).
			raw("operation", op.done()).done(), true
	}
	return nil, false
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a []string always marshals
	}
	return b
}

// builtinInput translates a built-in's call or output item of history; false when typ
// is not one.
func (c *conv) builtinInput(typ string, f fields) (bool, *door.Error) {
	switch typ {
	case "shell_call", "apply_patch_call":
		id, e := callID(f)
		if e != nil {
			return true, e
		}
		key, name := "action", "shell"
		if typ == "apply_patch_call" {
			key, name = "operation", "apply_patch"
		}
		args, e := f.rawObject(key)
		if e != nil {
			return true, e
		}
		if args == nil {
			return true, missing(f.param(key))
		}
		c.call(id, name, string(args))
		return true, nil
	case "local_shell_call":
		id, e := callID(f)
		if e != nil {
			return true, e
		}
		action, e := f.rawObject("action")
		if e != nil {
			return true, e
		}
		if action == nil {
			return true, missing(f.param("action"))
		}
		af, _ := object(action, f.param("action"))
		args := newObj(len(action) + 16)
		for _, k := range []string{"command", "working_directory", "timeout_ms"} {
			if v := af.get(k); v != nil && string(v) != "null" {
				args.raw(k, v)
			}
		}
		c.call(id, "local_shell", string(args.done()))
		return true, nil
	case "local_shell_call_output":
		// OpenAI's input item names the call by id (the call's own id, which the gateway
		// writes as its call_id too); call_id is taken as well.
		id := f.get("call_id")
		if id == nil {
			id = f.get("id")
		}
		if id == nil {
			return true, missing(f.param("call_id"))
		}
		out, e := requiredString(f, "output")
		if e != nil {
			return true, e
		}
		c.toolMessage(id, quote(out))
		return true, nil
	case "shell_call_output":
		id, e := callID(f)
		if e != nil {
			return true, e
		}
		out, e := f.rawArray("output")
		if e != nil {
			return true, e
		}
		if out == nil {
			return true, missing(f.param("output"))
		}
		var runs []struct {
			Stdout  string `json:"stdout"`
			Stderr  string `json:"stderr"`
			Outcome struct {
				Type     string `json:"type"`
				ExitCode *int   `json:"exit_code"`
			} `json:"outcome"`
		}
		if err := json.Unmarshal(out, &runs); err != nil {
			return true, invalid(f.param("output"), "Invalid '%s': each entry is an object with stdout, stderr and outcome.", f.param("output"))
		}
		var text strings.Builder
		for _, r := range runs {
			text.WriteString(r.Stdout)
			if r.Stderr != "" {
				text.WriteString("\n[stderr]\n" + r.Stderr)
			}
			switch {
			case r.Outcome.Type == "timeout":
				text.WriteString("\n[timed out]\n")
			case r.Outcome.ExitCode != nil && *r.Outcome.ExitCode != 0:
				text.WriteString("\n[exit code " + strconv.Itoa(*r.Outcome.ExitCode) + "]\n")
			}
		}
		c.toolMessage(id, quote(text.String()))
		return true, nil
	case "apply_patch_call_output":
		id, e := callID(f)
		if e != nil {
			return true, e
		}
		status, e := f.need("status")
		if e != nil {
			return true, e
		}
		out, e := f.str("output")
		if e != nil {
			return true, e
		}
		text := status
		if out != "" {
			text += ": " + out
		}
		c.toolMessage(id, quote(text))
		return true, nil
	}
	return false, nil
}
