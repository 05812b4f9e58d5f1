package oai

import (
	"bytes"
	"encoding/json"
)

// EmptySystem is the message SystemBehindEmpty puts first: a system message without
// text.
const EmptySystem = `{"role":"system","content":""}`

// SystemBehindEmpty returns a messages array whose first element is a system message
// with text as EmptySystem followed by every byte of msgs after its '[' — the client's
// messages unchanged, moved one place — and true. Hermes/Qwen chat templates write
// messages[0]'s text and then the tools into the first system turn, and a later system
// message as a turn of its own, so the prompt becomes the tools first and the client's
// system prompt after them (backends.Request.CatalogFirst). Anything else — not a valid
// array, no leading system message, one whose content is empty — comes back as it is,
// with false.
func SystemBehindEmpty(msgs []byte) ([]byte, bool) {
	var first []byte
	n := 0
	if Elements(msgs, func(elem []byte) error {
		if n == 0 {
			first = elem
		}
		n++
		return nil
	}) != nil || n == 0 {
		return msgs, false
	}
	m, err := ParseObject(first)
	if err != nil {
		return msgs, false
	}
	role, _ := m.Get("role")
	var r string
	if json.Unmarshal(role, &r) != nil || r != "system" {
		return msgs, false
	}
	content, _ := m.Get("content")
	if c := string(bytes.TrimSpace(content)); c == "" || c == `""` || c == "null" || c == "[]" {
		return msgs, false
	}
	open := skipSpace(msgs, 0) + 1 // Elements saw the '['
	out := make([]byte, 0, len(msgs)+len(EmptySystem)+1)
	out = append(out, msgs[:open]...)
	out = append(out, EmptySystem...)
	out = append(out, ',')
	return append(out, msgs[open:]...), true
}
