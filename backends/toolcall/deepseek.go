package toolcall

import "bytes"

// deepseek reads DeepSeek's call block:
//
//	<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
//
// as V3.1 writes each call, and V3's (and R1's)
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>.
// Calls in a block may be separated by whitespace (V3 writes a newline).
type deepseek struct {
	state  int
	opener string // the markers (and whitespace) that began the current call
	seen   int
}

const (
	dOut   = iota // content
	dCall         // inside <｜tool▁call▁begin｜>
	dBlock        // between calls of a block
)

var (
	deepseekBlocks = []string{deepseekCallsBegin}
	deepseekEnds   = []string{deepseekCallEnd}
)

func (d *deepseek) step(p *Parser, final bool) bool {
	switch d.state {
	case dOut:
		if _, ok := p.until(deepseekBlocks, final, p.em.content); !ok {
			return false
		}
		r := len(deepseekCallsBegin)
		r += spaces(p.buf[r:])
		switch prefixOf(p.buf[r:], deepseekCallBegin) {
		case has:
			d.enter(p, r+len(deepseekCallBegin))
		case maybe:
			if !final {
				return false
			}
			if p.cut { // the block's marker and nothing of a call: nothing
				p.consume(len(p.buf))
				return true
			}
			fallthrough
		default: // a block that holds no call is text
			p.em.content(deepseekCallsBegin)
			p.consume(len(deepseekCallsBegin))
		}
		return true
	case dBlock:
		r := spaces(p.buf)
		end, next := prefixOf(p.buf[r:], deepseekCallsEnd), prefixOf(p.buf[r:], deepseekCallBegin)
		switch {
		case end == has:
			p.consume(r + len(deepseekCallsEnd))
			d.state = dOut
		case next == has:
			d.enter(p, r+len(deepseekCallBegin))
		case (end == maybe || next == maybe) && !final:
			return false
		default: // the block ended without its end marker: the rest is content
			d.state = dOut
		}
		return true
	}
	i, _, st := p.bounded(deepseekEnds, p.max, &d.seen, final)
	if st == unclosed && p.cut {
		if _, _, ok := deepseekCall(p.buf[:i]); !ok {
			if name, args, ok := deepseekCut(p.buf); ok {
				p.em.call(name, args)
			}
			p.consume(len(p.buf))
			d.state = dOut
			return true
		}
	}
	switch st {
	case needMore:
		return false
	case closed, unclosed:
		if name, args, ok := deepseekCall(p.buf[:i]); ok {
			p.em.call(name, args)
			p.consume(min(len(p.buf), i+len(deepseekCallEnd)))
			d.state = dBlock
			return true
		}
	}
	p.em.content(d.opener)
	d.state = dOut
	return true
}

// enter consumes the n bytes that open a call.
func (d *deepseek) enter(p *Parser, n int) {
	d.opener = string(p.buf[:n])
	p.consume(n)
	d.state, d.seen = dCall, 0
}

// deepseekCall reads the inside of <｜tool▁call▁begin｜>…<｜tool▁call▁end｜>.
func deepseekCall(body []byte) (name, args string, ok bool) {
	head, rest, found := bytes.Cut(body, []byte(deepseekSep))
	if !found {
		return "", "", false
	}
	head, rest = bytes.TrimSpace(head), bytes.TrimSpace(rest)
	if len(rest) > 0 && (rest[0] == '{' || rest[0] == '[') { // V3.1: NAME<｜tool▁sep｜>{…}
		if !validName(head) {
			return "", "", false
		}
		args, ok = arguments(rest)
		return string(head), args, ok
	}
	if string(head) != "function" { // V3: function<｜tool▁sep｜>NAME\n```json\n{…}\n```
		return "", "", false
	}
	line, code, _ := bytes.Cut(rest, []byte("\n"))
	line, code = bytes.TrimSpace(line), bytes.TrimSpace(code)
	code, fenced := bytes.CutPrefix(code, []byte("```json"))
	if !fenced || !validName(line) {
		return "", "", false
	}
	if code, fenced = bytes.CutSuffix(code, []byte("```")); !fenced {
		return "", "", false
	}
	code = bytes.TrimSpace(code)
	if len(code) == 0 || (code[0] != '{' && code[0] != '[') {
		return "", "", false
	}
	args, ok = arguments(code)
	return string(line), args, ok
}

func validName(b []byte) bool {
	return len(b) > 0 && len(b) <= maxName && !bytes.ContainsAny(b, " \t\r\n\"{}[]")
}

// deepseekCut reads a call the token limit cut: its name, once whole, and what came of
// its arguments (V3.1: NAME<｜tool▁sep｜>{…; V3: function<｜tool▁sep｜>NAME\n```json\n{…).
func deepseekCut(body []byte) (name, args string, ok bool) {
	head, rest, found := bytes.Cut(body, []byte(deepseekSep))
	if !found {
		return "", "", false
	}
	head = bytes.TrimSpace(head)
	if string(head) != "function" {
		if !validName(head) {
			return "", "", false
		}
		return string(head), string(bytes.TrimSpace(rest)), true
	}
	line, code, whole := bytes.Cut(rest, []byte("\n"))
	line = bytes.TrimSpace(line)
	if !whole || !validName(line) {
		return "", "", false
	}
	code = bytes.TrimSpace(code)
	if bytes.HasPrefix([]byte("```json"), code) {
		return string(line), "", true
	}
	code, _ = bytes.CutPrefix(code, []byte("```json"))
	code = bytes.TrimRight(bytes.TrimSpace(code), "`") // the closing fence, or what came of it
	return string(line), string(bytes.TrimSpace(code)), true
}
