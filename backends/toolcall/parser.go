package toolcall

import (
	"fmt"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

// Options configure a Parser. The zero value of each field is its default.
type Options struct {
	// ResponseID seeds the call ids (see CallID). If empty, calls are "call_0", "call_1", …
	ResponseID string
	// MaxCallBytes bounds the text held for one call, so a runaway generation cannot make
	// the gateway buffer without bound; a call still open past it is given up and passed
	// on as content. If zero, 4 MiB.
	MaxCallBytes int
	// Cut says the text was cut by the token limit (finish_reason "length"): Parse ends
	// it as FinishCut does.
	Cut bool
}

// Event is one step of parsed text. Exactly one field is set.
type Event struct {
	// Content is text for the client.
	Content string
	// Reasoning is the model's reasoning (harmony's analysis channel), which OpenAI's chat
	// API does not return.
	Reasoning string
	// Call is a whole call: Index (0, 1, … within the response), ID, Type "function",
	// Function.Name and Function.Arguments.
	Call *oai.ToolCall
}

// Message is a whole parsed text.
type Message struct {
	Content   string
	Reasoning string
	// ToolCalls carry ID, Type and Function; Index is nil, as in OpenAI's message.
	ToolCalls []oai.ToolCall
}

// Parser reads one streamed completion. It is not safe for concurrent use.
type Parser struct {
	format string
	f      stepper
	buf    []byte // text not resolved yet
	max    int
	em     emitter
	cut    bool // the text ended at the token limit: see FinishCut
}

// stepper is one format's state machine. step resolves a prefix of p.buf (removing it
// with p.consume) or changes state, and reports whether it did either. With final false
// it must not decide anything that text not yet fed could change, which is what makes a
// streamed parse equal the whole one; with final true it must make progress until p.buf
// is empty and it is back outside any call.
type stepper interface {
	step(p *Parser, final bool) bool
}

// NewParser returns a Parser for format, one of Names.
func NewParser(format string, o Options) (*Parser, error) {
	p := &Parser{format: format, max: o.MaxCallBytes}
	if p.max <= 0 {
		p.max = 4 << 20
	}
	resp := o.ResponseID
	p.em.id = func(i int) string { return CallID(format, resp, i) }
	switch format {
	case Hermes:
		p.f = &hermes{}
	case Llama3:
		p.f = &llama3{state: lStart}
	case Mistral:
		p.f = &mistral{}
	case Harmony:
		p.f = &harmony{state: hStart}
	case DeepSeek:
		p.f = &deepseek{}
	default:
		return nil, fmt.Errorf("tool-call format %q is not one of %s", format, strings.Join(Names(), ", "))
	}
	return p, nil
}

// Feed takes the next piece of text and returns what it resolves.
func (p *Parser) Feed(text string) []Event {
	p.buf = append(p.buf, text...)
	for p.f.step(p, false) {
	}
	return p.em.take()
}

// Finish resolves what is left at the end of the text. A call whose end marker never
// came is still a call when its body parses: engines stop at the end-of-turn token, which
// some templates write instead of the call's own end.
func (p *Parser) Finish() []Event {
	for p.f.step(p, true) {
	}
	p.em.finish()
	return p.em.take()
}

// FinishCut is Finish for a text the token limit cut (finish_reason "length"): a call
// that began is still a call once its name is whole, with its arguments as far as they
// came (maybe nothing), as OpenAI returns a call cut by max_tokens; a call cut before
// its name was whole is dropped. Either way the format's markers and the call's text
// never come back as content.
func (p *Parser) FinishCut() []Event {
	p.cut = true
	return p.Finish()
}

// Calls is the number of calls returned so far.
func (p *Parser) Calls() int { return p.em.calls }

// Parse reads a whole completion text in format.
func Parse(format, text string, o Options) (*Message, error) {
	p, err := NewParser(format, o)
	if err != nil {
		return nil, err
	}
	m := &Message{}
	var content, reasoning strings.Builder
	finish := p.Finish
	if o.Cut {
		finish = p.FinishCut
	}
	for _, ev := range append(p.Feed(text), finish()...) {
		content.WriteString(ev.Content)
		reasoning.WriteString(ev.Reasoning)
		if ev.Call != nil {
			c := *ev.Call
			c.Index = nil
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	m.Content, m.Reasoning = content.String(), reasoning.String()
	return m, nil
}

func (p *Parser) consume(n int) {
	p.buf = append(p.buf[:0], p.buf[n:]...)
}

// emitter collects events. Whitespace at the end of content is held, and dropped when a
// call follows or when the text ends after calls, so that the newlines around calls do not
// become content; text after a call keeps the whitespace before it.
type emitter struct {
	events []Event
	ws     string
	calls  int
	id     func(int) string
}

func (e *emitter) content(s string) {
	if s == "" {
		return
	}
	t := strings.TrimRight(s, " \t\r\n")
	if t == "" {
		e.ws += s
		return
	}
	e.text(e.ws + t)
	e.ws = s[len(t):]
}

func (e *emitter) text(s string) {
	if n := len(e.events); n > 0 && e.events[n-1].Call == nil && e.events[n-1].Reasoning == "" {
		e.events[n-1].Content += s
		return
	}
	e.events = append(e.events, Event{Content: s})
}

func (e *emitter) reasoning(s string) {
	if s == "" {
		return
	}
	if n := len(e.events); n > 0 && e.events[n-1].Reasoning != "" {
		e.events[n-1].Reasoning += s
		return
	}
	e.events = append(e.events, Event{Reasoning: s})
}

func (e *emitter) call(name, args string) {
	i := e.calls
	e.calls++
	e.ws = ""
	e.events = append(e.events, Event{Call: &oai.ToolCall{Index: &i, ID: e.id(i), Type: "function",
		Function: oai.FunctionCall{Name: name, Arguments: args}}})
}

func (e *emitter) finish() {
	if e.calls == 0 && e.ws != "" {
		e.text(e.ws)
	}
	e.ws = ""
}

func (e *emitter) take() []Event {
	out := e.events
	e.events = nil
	return out
}
