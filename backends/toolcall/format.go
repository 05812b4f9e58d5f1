package toolcall

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// Format names, as configuration and masking.FormatByName spell them.
const (
	Hermes   = "hermes"   // <tool_call>{"name": …, "arguments": …}</tool_call>
	Llama3   = "llama3"   // {"name": …, "parameters": …}, optionally after <|python_tag|>
	Mistral  = "mistral"  // [TOOL_CALLS]NAME[ARGS]{…}, or [TOOL_CALLS][{"name": …, "arguments": …}]
	Harmony  = "harmony"  // <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
	DeepSeek = "deepseek" // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…
)

// Names lists the formats this package reads, in a fixed order.
func Names() []string { return []string{Hermes, Llama3, Mistral, Harmony, DeepSeek} }

// IsFormat reports whether name is one of Names.
func IsFormat(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Markers of the formats.
const (
	hermesOpen  = "<tool_call>"
	hermesClose = "</tool_call>"

	pythonTag = "<|python_tag|>"

	mistralCalls  = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralCallID = "[CALL_ID]"

	harmonyStart     = "<|start|>"
	harmonyChannel   = "<|channel|>"
	harmonyConstrain = "<|constrain|>"
	harmonyMessage   = "<|message|>"
	harmonyEnd       = "<|end|>"
	harmonyCall      = "<|call|>"
	harmonyReturn    = "<|return|>"

	deepseekCallsBegin = "<｜tool▁calls▁begin｜>"
	deepseekCallsEnd   = "<｜tool▁calls▁end｜>"
	deepseekCallBegin  = "<｜tool▁call▁begin｜>"
	deepseekCallEnd    = "<｜tool▁call▁end｜>"
	deepseekSep        = "<｜tool▁sep｜>"
)

// SpecialTokens are the markers of format that an engine must print for the parser to see
// them. llama-server drops special tokens from the text it returns unless they are listed
// in a request's preserved_tokens (or it runs with --special); a marker that is not one
// token in the loaded model is ignored there, so the list is safe to send to any model.
// Nil for an unknown format.
func SpecialTokens(format string) []string {
	switch format {
	case Hermes:
		return []string{hermesOpen, hermesClose}
	case Llama3:
		return []string{pythonTag}
	case Mistral:
		return []string{mistralCalls, mistralArgs, mistralCallID}
	case Harmony:
		return []string{harmonyStart, harmonyChannel, harmonyConstrain, harmonyMessage, harmonyEnd, harmonyCall, harmonyReturn}
	case DeepSeek:
		return []string{deepseekCallsBegin, deepseekCallBegin, deepseekSep, deepseekCallEnd, deepseekCallsEnd}
	}
	return nil
}

// Detect guesses the wire format from a model's Jinja chat template (llama-server's
// GET /props "chat_template", a GGUF's tokenizer.chat_template) by the markers the
// template writes. It reports false when none matches; the caller then needs the format
// from its configuration.
func Detect(chatTemplate string) (string, bool) {
	has := func(s string) bool { return strings.Contains(chatTemplate, s) }
	switch {
	case has(harmonyChannel) && has(harmonyMessage):
		return Harmony, true
	case has(deepseekCallsBegin):
		return DeepSeek, true
	case has(mistralCalls):
		return Mistral, true
	case has(hermesOpen):
		return Hermes, true
	case has(pythonTag), has("<|start_header_id|>") && has(`"parameters": `):
		return Llama3, true
	}
	return "", false
}

// CallID is the id of call index of the response responseID: "call_" + the response id
// without its "chatcmpl-" prefix + "_" + index, so ids are deterministic per response and
// differ between responses. For Mistral it is 9 letters and digits derived from the same
// two values, because Mistral's templates refuse any other tool-call id when the client
// sends the call back.
func CallID(format, responseID string, index int) string {
	if format == Mistral {
		h := fnv.New64a()
		h.Write([]byte(responseID))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(index)))
		const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		v := h.Sum64()
		var b [9]byte
		for i := range b {
			b[i] = digits[v%62]
			v /= 62
		}
		return string(b[:])
	}
	id := strings.TrimPrefix(responseID, "chatcmpl-")
	if id == "" {
		return "call_" + strconv.Itoa(index)
	}
	return "call_" + id + "_" + strconv.Itoa(index)
}
