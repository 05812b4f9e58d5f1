package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxText is the most bytes of Result.Text. A longer result is cut, and the
// cut says so: "… [result cut: N more bytes]".
const MaxText = 1 << 20

// cutNote is the longest note a cut adds; the kept text leaves room for it.
const cutNote = len("… [result cut: 18446744073709551615 more bytes]")

// render is the text the model reads for a tool result, at most limit bytes:
// the content parts in order, joined with "\n" (text as is; image and audio
// as "[image image/png, N bytes]"; a resource link as its URI; an embedded
// resource as its text, or "[resource URI, N bytes]" for a blob); and, when
// no part is text, the structured content as JSON.
func render(res *sdk.CallToolResult, limit int) string {
	w := capped{limit: limit}
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			hasText = true
			w.part(c.Text)
		case *sdk.ImageContent:
			w.part(fmt.Sprintf("[image %s, %d bytes]", mime(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			w.part(fmt.Sprintf("[audio %s, %d bytes]", mime(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			w.part(c.URI)
		case *sdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "" || r.Blob == nil:
				w.part(r.Text)
			default:
				w.part(fmt.Sprintf("[resource %s %s, %d bytes]", r.URI, mime(r.MIMEType), len(r.Blob)))
			}
		case nil:
		default:
			// Sampling content (tool_use, tool_result) has no place in a tool
			// result; name it rather than drop it silently.
			w.part(fmt.Sprintf("[%T content]", c))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			w.part(string(b))
		}
	}
	return w.String()
}

func mime(m string) string {
	if m == "" {
		return "unknown type"
	}
	return m
}

// capped joins parts with "\n", keeping at most limit bytes and counting
// the rest.
type capped struct {
	limit int
	b     strings.Builder
	total int // bytes written, kept or not
	parts int
}

func (w *capped) part(s string) {
	if w.parts > 0 {
		w.write("\n")
	}
	w.parts++
	w.write(s)
}

func (w *capped) write(s string) {
	w.total += len(s)
	if room := w.limit - w.b.Len(); room > 0 {
		w.b.WriteString(s[:min(room, len(s))])
	}
}

// String returns the text, or, when it is longer than limit, as much of it
// as fits (never splitting a UTF-8 sequence) with the note of the cut.
func (w *capped) String() string {
	s := w.b.String()
	if w.total <= w.limit {
		return s
	}
	keep := max(w.limit-cutNote, 0)
	for i := 1; i < utf8.UTFMax && keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]); i++ {
		keep--
	}
	s = s[:keep]
	note := fmt.Sprintf("… [result cut: %d more bytes]", w.total-len(s))
	if len(s)+len(note) > w.limit {
		// Only a limit below cutNote gets here (tests); the note still wins.
		return note
	}
	return s + note
}
