package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/maskgate/maskgate/backends/oai"
)

// Many chat templates (Llama's, Mistral's, Gemma's) raise "System message must be at
// the beginning" for a system message after the first turn, where clients put one (a
// developer item mid-conversation, Codex's and Claude Code's reminders). Where
// /apply-template refuses one so, the backend merges the client's later system and
// developer messages into the leading system message, once per request, and remembers
// that this engine's template refuses them, so later requests are merged before they
// are rendered and their warnings say so (Notes).

// lateSystem states: not yet known, refused by the template, taken by it.
const (
	lateUnknown int32 = iota
	lateRefused
	lateTaken
)

// lateSystemCache is what the engine's template was seen to do with a late system
// message.
type lateSystemCache struct{ late atomic.Int32 }

// refusesLateSystem says whether err is a template's refusal of a system message that
// is not the first.
func refusesLateSystem(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "system message")
}

// lateSystemNote is the warning a merged request gets.
const lateSystemNote = "this model's chat template takes a system message only at the beginning; the later system and developer messages were merged into the first"

// lateSystemAt returns the indexes of the system and developer messages of msgs (a
// JSON array) that come after a message of another role; nil when none.
func lateSystemAt(msgs []byte) []int {
	var roles []struct {
		Role string `json:"role"`
	}
	if json.Unmarshal(msgs, &roles) != nil {
		return nil
	}
	var late []int
	other := false
	for i, m := range roles {
		switch m.Role {
		case "system", "developer":
			if other {
				late = append(late, i)
			}
		default:
			other = true
		}
	}
	return late
}

// mergeLateSystem returns body with every system and developer message after the
// leading ones merged, as text, into one leading system message (the leading ones'
// text first, then each later one's, blank-line separated); body unchanged when there
// is none.
func mergeLateSystem(body []byte) ([]byte, bool, error) {
	raw, ok := oai.Get(body, "messages")
	if !ok || lateSystemAt(raw) == nil {
		return body, false, nil
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, false, err
	}
	var texts []string
	var rest []json.RawMessage
	for _, m := range msgs {
		role, _ := oai.Get(m, "role")
		if r := string(role); r == `"system"` || r == `"developer"` {
			if t := messageText(m); t != "" {
				texts = append(texts, t)
			}
			continue
		}
		rest = append(rest, m)
	}
	var arr bytes.Buffer
	arr.WriteString(`[{"role":"system","content":`)
	arr.WriteString(strconv.Quote(strings.Join(texts, "\n\n")))
	arr.WriteByte('}')
	for _, m := range rest {
		arr.WriteByte(',')
		arr.Write(m)
	}
	arr.WriteByte(']')
	out, err := oai.Set(body, "messages", arr.Bytes())
	return out, err == nil, err
}

// messageText is a message's content as text: the string, or its text parts joined.
func messageText(m []byte) string {
	var c struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(m, &c) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(c.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(c.Content, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// systemNote says, for body's warnings, that its late system messages will be merged:
// where the template is known to refuse them, or, the first time, where a render of
// the body's messages alone shows it does.
func (b *Backend) systemNote(ctx context.Context, body []byte) []string {
	msgs, ok := oai.Get(body, "messages")
	if !ok || lateSystemAt(msgs) == nil {
		return nil
	}
	if b.late.Load() == lateUnknown {
		probe := append(append([]byte(`{"messages":`), msgs...), '}')
		_, err := b.applyTemplate(ctx, probe)
		switch {
		case refusesLateSystem(err):
			b.late.Store(lateRefused)
		case err == nil:
			b.late.Store(lateTaken)
		}
	}
	if b.late.Load() == lateRefused {
		return []string{"messages: " + lateSystemNote}
	}
	return nil
}

// render is applyTemplate for a request: merged first where the template is known to
// refuse a late system message; else, when it refuses one now, merged and rendered
// again, once.
func (b *Backend) render(ctx context.Context, req []byte, tmpl func([]byte) ([]byte, []string, error)) (string, []string, error) {
	if b.late.Load() == lateRefused {
		merged, _, err := mergeLateSystem(req)
		if err != nil {
			return "", nil, err
		}
		req = merged
	}
	body, media, err := tmpl(req)
	if err != nil {
		return "", nil, err
	}
	prompt, err := b.applyTemplate(ctx, body)
	if !refusesLateSystem(err) {
		return prompt, media, err
	}
	merged, did, merr := mergeLateSystem(req)
	if merr != nil || !did {
		return "", nil, err
	}
	b.late.Store(lateRefused)
	if body, media, err = tmpl(merged); err != nil {
		return "", nil, err
	}
	prompt, err = b.applyTemplate(ctx, body)
	return prompt, media, err
}
