package masking

import (
	"strings"
	"unicode/utf8"
)

// AllowedTools renders spec as an OpenAI tool_choice of type allowed_tools
// (API reference, Chat Completions, tool_choice → "Allowed tools"):
//
//	{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"A"}}]}}
//
// ModeAuto gives mode "auto"; ModeRequired and ModeSpecified give "required"
// (OpenAI has no name prefix, so ModeSpecified lists the names under
// Namespace, and a namespace that is a whole name forces that tool). Names
// keep the spec's order, deduplicated; the bytes depend on nothing else.
// Format is not used: OpenAI parses its own calls. Names are sent as given;
// mapping names OpenAI refuses is the backend's job. In ModeAuto with no
// name the list is empty: send tool_choice "none" instead.
func AllowedTools(spec Spec) []byte {
	mode := "required"
	if spec.Mode == ModeAuto {
		mode = "auto"
	}
	seen := make(map[string]bool, len(spec.Allowed))
	size := 64
	for _, n := range spec.Allowed {
		size += len(n) + 48
	}
	out := make([]byte, 0, size)
	out = append(out, `{"type":"allowed_tools","allowed_tools":{"mode":"`...)
	out = append(out, mode...)
	out = append(out, `","tools":[`...)
	first := true
	for _, n := range spec.Allowed {
		if seen[n] || (spec.Mode == ModeSpecified && !strings.HasPrefix(n, spec.Namespace)) {
			continue
		}
		seen[n] = true
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, `{"type":"function","function":{"name":`...)
		out = appendJSONString(out, n)
		out = append(out, "}}"...)
	}
	return append(out, "]}}"...)
}

// appendJSONString appends s as a JSON string without HTML escaping (the
// engines read JSON, not HTML, and "<tool_call>" should stay readable in
// logs and golden files). Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(appendJSONChars(dst, s), '"')
}

// appendJSONChars appends s escaped as the inside of a JSON string, copying
// runs that need no escaping at once.
func appendJSONChars(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		switch {
		case c >= utf8.RuneSelf:
			dst = append(dst, `\ufffd`...)
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}
