package llamacpp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

// The Hermes / Qwen tool-call wire format: each call is
// <tool_call>\n{"name": "NAME", "arguments": {...}}\n</tool_call> in the completion text.
const (
	openTag  = "<tool_call>"
	closeTag = "</tool_call>"
	// maxCallBytes bounds the text held while a call is open; past it the call is given
	// up and passed on as text, so a runaway generation cannot make the gateway buffer
	// without bound.
	maxCallBytes = 4 << 20
)

// piece is one step of parsed completion text: content, or a tool call.
type piece struct {
	text string
	call *oai.ToolCall // Function.Name and Function.Arguments only
}

// splitter separates tool calls from content in completion text that arrives in pieces
// of any size. Text that may begin a <tool_call> is held until it resolves; a call is
// emitted whole once its closing tag (or the end of the text) arrives; a call whose
// inside is not a JSON object with a string "name" is passed on as the text it was.
// Whitespace at the end of content is held too, and dropped when a call follows or when
// the text ends after calls, so that the newlines around calls do not become content.
// Feeding the same text in any split gives the same calls and the same content.
type splitter struct {
	buf   []byte // unresolved text: a possible tag start outside a call, the body inside one
	ws    []byte // whitespace held at the end of content
	in    bool   // inside <tool_call>
	seen  int    // bytes of buf inside a call already searched for the closing tag
	calls int
}

// feed takes the next piece of text and returns what it resolves.
func (s *splitter) feed(text string) []piece {
	s.buf = append(s.buf, text...)
	var out []piece
	for {
		if s.in {
			// Search only where the closing tag can newly end, so a long call fed token
			// by token costs linear time.
			from := max(0, s.seen-len(closeTag)+1)
			i := bytes.Index(s.buf[from:], []byte(closeTag))
			if i < 0 {
				s.seen = len(s.buf)
				if len(s.buf) > maxCallBytes {
					out = s.content(out, openTag+string(s.buf))
					s.buf, s.in, s.seen = s.buf[:0], false, 0
				}
				return out
			}
			i += from
			s.seen = 0
			out = s.resolve(out, s.buf[:i], true)
			s.buf = append(s.buf[:0], s.buf[i+len(closeTag):]...)
			s.in = false
			continue
		}
		if i := bytes.Index(s.buf, []byte(openTag)); i >= 0 {
			out = s.content(out, string(s.buf[:i]))
			s.buf = append(s.buf[:0], s.buf[i+len(openTag):]...)
			s.in, s.seen = true, 0
			continue
		}
		keep := partialTag(s.buf)
		out = s.content(out, string(s.buf[:len(s.buf)-keep]))
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-keep:]...)
		return out
	}
}

// finish resolves what is left at the end of the text. A call left open is still a call
// when its body parses: some templates end a call at the end-of-turn token without
// writing the closing tag.
func (s *splitter) finish() []piece {
	var out []piece
	if s.in {
		out = s.resolve(out, s.buf, false)
	} else {
		out = s.content(out, string(s.buf))
	}
	s.buf, s.in, s.seen = s.buf[:0], false, 0
	if s.calls == 0 && len(s.ws) > 0 {
		out = append(out, piece{text: string(s.ws)})
	}
	s.ws = s.ws[:0]
	return out
}

// resolve turns the inside of one <tool_call> into a call, or back into text.
func (s *splitter) resolve(out []piece, inner []byte, closed bool) []piece {
	if call, ok := parseCall(inner); ok {
		s.calls++
		s.ws = s.ws[:0] // whitespace before a call is not content
		return append(out, piece{call: call})
	}
	text := openTag + string(inner)
	if closed {
		text += closeTag
	}
	return s.content(out, text)
}

// content appends text as content, holding back its trailing whitespace.
func (s *splitter) content(out []piece, text string) []piece {
	if text == "" {
		return out
	}
	trimmed := strings.TrimRight(text, " \t\r\n")
	if trimmed == "" {
		s.ws = append(s.ws, text...)
		return out
	}
	emit := string(s.ws) + trimmed
	s.ws = append(s.ws[:0], text[len(trimmed):]...)
	if n := len(out); n > 0 && out[n-1].call == nil {
		out[n-1].text += emit
		return out
	}
	return append(out, piece{text: emit})
}

// partialTag is the length of the longest end of b that could begin openTag.
func partialTag(b []byte) int {
	n := min(len(b), len(openTag)-1)
	for ; n > 0; n-- {
		if bytes.HasSuffix(b, []byte(openTag[:n])) {
			return n
		}
	}
	return 0
}

// parseCall reads {"name": ..., "arguments": ...} from the inside of a <tool_call>.
// Arguments that are an object (or any JSON value) become their compact JSON text; a
// string is taken as the JSON text it holds, as some models write it; missing or null
// arguments become "{}".
func parseCall(inner []byte) (*oai.ToolCall, bool) {
	var c struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	inner = bytes.TrimSpace(inner)
	if len(inner) == 0 || inner[0] != '{' || json.Unmarshal(inner, &c) != nil || c.Name == nil || *c.Name == "" {
		return nil, false
	}
	args := "{}"
	switch {
	case len(c.Arguments) == 0 || string(c.Arguments) == "null":
	case c.Arguments[0] == '"':
		if json.Unmarshal(c.Arguments, &args) != nil {
			return nil, false
		}
	default:
		var b bytes.Buffer
		if json.Compact(&b, c.Arguments) != nil {
			return nil, false
		}
		args = b.String()
	}
	return &oai.ToolCall{Type: "function", Function: oai.FunctionCall{Name: *c.Name, Arguments: args}}, true
}

// splitText parses a whole completion text.
func splitText(text string) []piece {
	var s splitter
	return append(s.feed(text), s.finish()...)
}
