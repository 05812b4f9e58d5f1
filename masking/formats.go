package masking

import (
	"fmt"
	"strings"
)

// The built-in formats. Each constructor's comment gives the bytes one call
// has in the model's output and where they were checked. Trigger is always
// the shortest text that precedes every call's name in every variant the
// model is known to emit, so that a lazy constraint (free text until the
// trigger) cannot be bypassed by a variant; Lead is what the model writes
// before it when a call is required at once.

// Llama3 is the Llama 3.1–3.3 JSON format: `{"name": "NAME", "parameters": {…}}`,
// as the templates render a tool call (`'{"name": "' + name + '", '`,
// `'"parameters": '`, arguments, `"}"`, then `<|eot_id|>`) and as their
// system text asks ("Respond in the format {"name": function name,
// "parameters": …}"). One call per message: the templates refuse more.
//
// No special token marks the call, so the trigger is the text `{"name": "`:
// every call starts with it, and prose rarely does. Text that does (a JSON
// example in an answer) is held to an allowed name too, which restricts the
// model but never lets a disabled name through. Variants without the space
// (`{"name":"`) are not calls in this format: the gateway's parser reads this
// format's bytes, and a text that is not parsed as a call cannot call a tool.
//
// The arguments are free text to the mask (End is empty): the call ends with
// the object, which a byte automaton cannot count, and the next `{"name": "`
// is constrained again.
func Llama3() Format {
	return Format{
		Name:      "llama3",
		Trigger:   `{"name": "`,
		NameClose: `", "parameters": `,
	}
}

// Mistral is the Mistral v11+ tokenizer format (Mistral Small 3.x, Magistral,
// Devstral, Ministral 3): `[TOOL_CALLS]NAME[ARGS]{…}`, each call with its own
// `[TOOL_CALLS]`, the message ending with the EOS token, as the templates
// render tool_calls (`'[TOOL_CALLS]' + name + '[ARGS]' + arguments` per call).
// `[TOOL_CALLS]` and `[ARGS]` are special tokens; the same text typed as
// ordinary tokens is matched too, since the gateway parses text.
//
// Older templates (v3/v7: `[TOOL_CALLS][{"name": …}]`) are not this format.
// There is no end marker: End is empty, the arguments are free text to the
// mask, and every further `[TOOL_CALLS]` is constrained.
func Mistral() Format {
	return Format{
		Name:      "mistral",
		Trigger:   "[TOOL_CALLS]",
		NameClose: "[ARGS]",
	}
}

// Harmony is gpt-oss's harmony format. The model addresses a call with a
// recipient in the message header, in one of two places (harmony docs,
// "Receiving tool calls": "the recipient might be defined in the role or
// channel section of the header"):
//
//	<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
//	<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>
//
// The first is what the docs show the model emitting; the second is how the
// gpt-oss template renders past calls. A generation starts after the
// prompt's `<|start|>assistant`, and may first hold an analysis message
// (`<|channel|>analysis<|message|>…<|end|><|start|>assistant…`).
//
// Both forms put `to=functions.` right before the name, so that text is the
// trigger; the name must then end with a space (NameClose), which the first
// form writes. The rest of the header (`<|constrain|>json` is optional), the
// arguments and `<|call|>` are free text to the mask (End is empty), so a
// second recipient anywhere later is constrained again. A model that puts the
// recipient in the role is held to a space after the name. In ModeRequired
// the output starts with Lead, `<|channel|>commentary `, the channel the
// harmony system message assigns to function calls.
func Harmony() Format {
	return Format{
		Name:      "harmony",
		Lead:      "<|channel|>commentary ",
		Trigger:   "to=functions.",
		NameClose: " ",
	}
}

// DeepSeek is the DeepSeek V3.1 format (also V3.2-Exp's template), checked
// against the V3.1 chat template:
//
//	<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>
//	   <｜tool▁call▁begin｜>NAME2<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//
// (no line break in the model's output; the bars are U+FF5C, the spaces
// U+2581, each marker one special token). Every call, not only the first,
// starts with `<｜tool▁call▁begin｜>`, so that is the trigger;
// `<｜tool▁calls▁begin｜>` is the Lead of a required call. V3 and R1 wrote
// `function<｜tool▁sep｜>NAME` and a fenced JSON block instead: not this
// format (DetectFormat tells them apart).
func DeepSeek() Format {
	return Format{
		Name:      "deepseek",
		Lead:      "<｜tool▁calls▁begin｜>",
		Trigger:   "<｜tool▁call▁begin｜>",
		NameClose: "<｜tool▁sep｜>",
		End:       "<｜tool▁call▁end｜>",
	}
}

// formatNames are the names FormatByName knows, in FormatNames' order; the
// tool-call text parsers use the same names.
var formatNames = [...]string{"hermes", "llama3", "mistral", "harmony", "deepseek"}

// FormatByName returns the built-in format called name: "hermes", "llama3",
// "mistral", "harmony" or "deepseek".
func FormatByName(name string) (Format, bool) {
	switch name {
	case "hermes":
		return Hermes(), true
	case "llama3":
		return Llama3(), true
	case "mistral":
		return Mistral(), true
	case "harmony":
		return Harmony(), true
	case "deepseek":
		return DeepSeek(), true
	}
	return Format{}, false
}

// FormatNames lists the built-in formats' names, in a fixed order.
func FormatNames() []string { return formatNames[:] }

// DetectFormat recognises the tool-call format a Jinja chat template writes,
// from marker substrings of the tool-call rendering. It reports false for a
// template it does not know, or one of a family's older formats that the
// built-in format does not describe; the caller then uses the remove
// strategy. Checks go from the most specific markers to the least, so a
// Hermes-style fine-tune of Llama 3 (which writes `<tool_call>`) is Hermes.
func DetectFormat(chatTemplate string) (Format, bool) {
	has := func(s string) bool { return strings.Contains(chatTemplate, s) }
	switch {
	case has("<|channel|>") && has("<|message|>") && has("to=") && has("functions."):
		return Harmony(), true
	case has("<｜tool▁call▁begin｜>") && has("<｜tool▁sep｜>"):
		// V3 and R1 fence the arguments in ```json after `function<｜tool▁sep｜>NAME`.
		if has("```json") {
			return Format{}, false
		}
		return DeepSeek(), true
	case has("[TOOL_CALLS]"):
		// v11+ writes [ARGS] between name and arguments; earlier versions a JSON list.
		if !has("[ARGS]") {
			return Format{}, false
		}
		return Mistral(), true
	case has("<tool_call>"):
		return Hermes(), true
	case has("<|start_header_id|>") && has(`"parameters": `) && has(`{"name": "`):
		return Llama3(), true
	}
	return Format{}, false
}

// callParts is one format's whole call as the renderings (GBNF, structural
// tag) write it: lead? open NAME mid ARGUMENTS end, then more calls after
// sep when multi, then tail. Format.End is only the marker that returns the
// mask to free text; what closes the JSON before it is known per format,
// so only the built-in formats, byte for byte, can be rendered whole.
type callParts struct {
	lead, open, mid, end string
	multi                bool   // parallel calls, one after another
	sep                  string // between parallel calls
	tail                 string // after the last call
	// special lists the format's markers that are one special token in
	// the model's vocabulary, for llama-server's preserved_tokens.
	special []string
}

func partsOf(f Format) (callParts, error) {
	switch f {
	case Hermes():
		return callParts{open: f.Trigger + f.NameOpen, mid: f.NameClose, end: "}\n" + f.End, multi: true, sep: "\n",
			special: []string{f.Trigger, f.End}}, nil
	case Llama3():
		return callParts{open: f.Trigger, mid: f.NameClose, end: "}"}, nil
	case Mistral():
		return callParts{open: f.Trigger, mid: f.NameClose, multi: true,
			special: []string{"[TOOL_CALLS]", "[ARGS]"}}, nil
	case Harmony():
		return callParts{lead: f.Lead, open: f.Trigger, mid: " <|constrain|>json<|message|>", end: "<|call|>",
			special: []string{"<|channel|>", "<|constrain|>", "<|message|>", "<|call|>"}}, nil
	case DeepSeek():
		return callParts{lead: f.Lead, open: f.Trigger, mid: f.NameClose, end: f.End, multi: true, tail: "<｜tool▁calls▁end｜>",
			special: []string{f.Lead, f.Trigger, f.NameClose, f.End, "<｜tool▁calls▁end｜>"}}, nil
	}
	return callParts{}, fmt.Errorf("masking: format %q: no whole-call rendering; it is given for the built-in formats llama3, mistral, harmony, deepseek and hermes only; use the remove strategy", f.Name)
}
