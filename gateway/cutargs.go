package gateway

import (
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

// closedArguments returns calls with every argument text that is not JSON closed into
// JSON (closeJSON). A round max_tokens cut can end inside a call's arguments; the
// gateway answers that call itself ("cut short … nothing ran") and puts the model's
// message back into the next round's history, where an engine that parses history
// arguments refuses half an object (llama-server's /apply-template answers 500:
// "Failed to parse tool call arguments as JSON"). calls itself is left as it is: what
// ran, or was refused, is decided on what the model wrote.
func closedArguments(calls []oai.ToolCall) []oai.ToolCall {
	out := calls
	for i, c := range calls {
		if json.Valid([]byte(c.Function.Arguments)) {
			continue
		}
		if &out[0] == &calls[0] {
			out = append([]oai.ToolCall(nil), calls...)
		}
		out[i].Function.Arguments = closeJSON(c.Function.Arguments)
	}
	return out
}

// closeJSON completes s, the start of a JSON value cut off at any byte, into valid JSON
// that begins with as much of s as it can keep, so that the prompt rendered from it
// shares the longest prefix with what the model wrote: an open string is closed, a
// key is given a null value, a literal or number is finished, a trailing comma is
// dropped and every open object and array is closed. What is not the start of a JSON
// value at all becomes {}.
func closeJSON(s string) string {
	var stack []jsonFrame
	top := func() *jsonFrame { return &stack[len(stack)-1] }
	// afterValue moves the enclosing container past a value just ended.
	afterValue := func() {
		if len(stack) > 0 {
			top().state = 3
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	i, done := 0, false // done: a whole top-level value has been read
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
			continue
		case done:
			return finish(b.String(), stack, "")
		case c == '"':
			end, ok := stringEnd(s, i)
			if !ok {
				return finish(b.String(), stack, openString(s[i:]))
			}
			if len(stack) > 0 && top().obj && top().state == 0 {
				top().state = 1
			} else if !valueAllowed(stack) {
				return finish(b.String(), stack, "")
			} else {
				afterValue()
			}
			b.WriteString(s[i:end])
			i = end
		case c == ':':
			if len(stack) == 0 || !top().obj || top().state != 1 {
				return finish(b.String(), stack, "")
			}
			top().state = 2
			b.WriteByte(c)
			i++
		case c == ',':
			if len(stack) == 0 || top().state != 3 {
				return finish(b.String(), stack, "")
			}
			if top().obj {
				top().state = 0
			} else {
				top().state = 2
			}
			b.WriteByte(c)
			i++
		case c == '{' || c == '[':
			if !valueAllowed(stack) {
				return finish(b.String(), stack, "")
			}
			f := jsonFrame{state: 2}
			if c == '{' {
				f = jsonFrame{obj: true}
			}
			stack = append(stack, f)
			b.WriteByte(c)
			i++
		case c == '}' || c == ']':
			if len(stack) == 0 || top().obj != (c == '}') || top().state == 1 || (top().state == 2 && top().obj) {
				return finish(b.String(), stack, "")
			}
			stack = stack[:len(stack)-1]
			b.WriteByte(c)
			i++
			afterValue()
			done = len(stack) == 0
		default:
			if !valueAllowed(stack) {
				return finish(b.String(), stack, "")
			}
			end := i
			for end < len(s) && strings.IndexByte(" \t\r\n,:]}[{\"", s[end]) < 0 {
				end++
			}
			word, whole := s[i:end], end < len(s)
			if json.Valid([]byte(word)) {
				b.WriteString(word)
				i = end
				afterValue()
				done = len(stack) == 0
				continue
			}
			if whole {
				return finish(b.String(), stack, "")
			}
			return finish(b.String(), stack, completeScalar(word))
		}
		if len(stack) == 0 && i > 0 && !done {
			done = true // a whole top-level string
		}
	}
	return finish(b.String(), stack, "")
}

// jsonFrame is an open object or array of closeJSON's scan. An object's state: 0
// expects a key (or '}'), 1 has read a key and expects ':', 2 expects a value, 3 has
// read a value and expects ',' or '}'. An array's: 2 and 3 alike.
type jsonFrame struct {
	obj   bool
	state int
}

// valueAllowed says whether a value may start here.
func valueAllowed(stack []jsonFrame) bool {
	return len(stack) == 0 || stack[len(stack)-1].state == 2
}

// finish appends tail (the completed cut value, if any) to kept and closes the
// containers left open; a result that is still not JSON gives {}.
func finish(kept string, stack []jsonFrame, tail string) string {
	out := kept
	if tail == "" {
		out = strings.TrimRight(kept, " \t\r\n")
	}
	for j := len(stack) - 1; j >= 0; j-- {
		f := stack[j]
		if j == len(stack)-1 {
			switch {
			case tail != "":
				out += tail
				if f.obj && f.state == 0 {
					out += ":null" // the tail was a key
				}
				tail = ""
			case f.state == 1:
				out += ":null"
			case f.obj && f.state == 2 && strings.HasSuffix(out, ":"):
				out += "null"
			case strings.HasSuffix(out, ","):
				out = out[:len(out)-1]
			}
		}
		if f.obj {
			out += "}"
		} else {
			out += "]"
		}
	}
	out += tail
	if out == "" || !json.Valid([]byte(out)) {
		return "{}"
	}
	return out
}

// stringEnd returns the index just past the string starting at s[i] (a quote), or
// false when s ends inside it.
func stringEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// openString closes a string cut off before its closing quote, dropping an escape cut
// in the middle.
func openString(s string) string {
	cut := len(s)
	for j := 1; j < len(s); j++ {
		if s[j] != '\\' {
			continue
		}
		n := 2 // \" \\ \n …
		if j+1 < len(s) && s[j+1] == 'u' {
			n = 6
		}
		if j+n > len(s) {
			cut = j
			break
		}
		j += n - 1
	}
	return s[:cut] + `"`
}

// completeScalar finishes a literal or number cut off at the end of the text: "tr"
// becomes true, "-" -0, "1." 1.0, "2e" 2e0; anything else is dropped.
func completeScalar(w string) string {
	for _, lit := range []string{"true", "false", "null"} {
		if strings.HasPrefix(lit, w) {
			return lit
		}
	}
	for _, pad := range []string{"", "0", "00"} {
		if json.Valid([]byte(w + pad)) {
			return w + pad
		}
	}
	return ""
}
