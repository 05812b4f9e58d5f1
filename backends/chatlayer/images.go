package chatlayer

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

// Notes an engine's prompt holds in place of an image it is not given, as a text part
// where the image part was. Each is also a warning to the client.
const (
	// NoteCannotSee stands for any image, for an engine that reads no images.
	NoteCannotSee = "[image omitted: this model cannot read images]"
	// NoteNotFetched stands for an image by URL (http, https or anything not data:) for
	// an engine that reads images: the gateway fetches nothing, and an engine behind
	// /completion gets images only as data.
	NoteNotFetched = "[image omitted: the gateway does not fetch image URLs; send the image as a data: URL]"
	// NoteBadData stands for a data: URL that is not base64 image data.
	NoteBadData = "[image omitted: its data: URL is not base64 image data]"
)

// Media is what an engine can take of a request's images.
type Media struct {
	// Sees says the engine reads images (llama-server with a multimodal projector:
	// GET /props says modalities.vision).
	Sees bool
	// Marker is, where Sees, the text that stands for one image in the prompt
	// (llama-server's media_marker; "<__media__>" where it names none): each image
	// becomes a text part holding it, and its data goes, in order, with the prompt.
	Marker string
}

// DefaultMarker is libmtmd's media marker, for a llama-server whose /props names none.
const DefaultMarker = "<__media__>"

// Images is a request's messages as an engine can take them.
type Images struct {
	// Messages is the messages array with each image part replaced by a text part: the
	// marker (an image the engine is given) or a note (one it is not). Messages without
	// image parts keep their bytes; when there are none, it is the array given.
	Messages []byte
	// Data are the base64 data of the images the markers stand for, in order.
	Data []string
	// Notes say what was left out, one each: "messages[1].content[0]: image omitted:
	// this model cannot read images".
	Notes []string
}

// HasImages reports whether a Chat Completions messages array may hold an image part.
// A cheap test on the bytes: false means none does.
func HasImages(messages []byte) bool {
	return bytes.Contains(messages, []byte(`image_url`))
}

// Rewrite replaces every image_url part of the messages' content arrays (any role: a
// tool result may carry images too) as m allows: an engine that sees gets a data: URL
// image as m.Marker and its data; everything else becomes a note. An error is a messages
// array that is not JSON: the caller's request is malformed.
func Rewrite(messages []byte, m Media) (*Images, error) {
	out := &Images{Messages: messages}
	if !HasImages(messages) {
		return out, oai.Elements(messages, func([]byte) error { return nil })
	}
	marker := m.Marker
	if marker == "" {
		marker = DefaultMarker
	}
	var list [][]byte
	changed := false
	i := 0
	err := oai.Elements(messages, func(msg []byte) error {
		nm, err := out.message(msg, i, m.Sees, marker)
		if err != nil {
			return err
		}
		changed = changed || &nm[0] != &msg[0] || len(nm) != len(msg)
		list = append(list, nm)
		i++
		return nil
	})
	if err != nil || !changed {
		return out, err
	}
	b := make([]byte, 0, len(messages))
	b = append(b, '[')
	for j, msg := range list {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, msg...)
	}
	out.Messages = append(b, ']')
	return out, nil
}

// message returns msg with its image parts replaced, or msg itself when it has none.
func (out *Images) message(msg []byte, i int, sees bool, marker string) ([]byte, error) {
	c, found, isObj := oai.Member(msg, "content")
	if !isObj || !found || !bytes.Contains(c, []byte(`image_url`)) {
		return msg, nil
	}
	c = bytes.TrimSpace(c)
	if len(c) == 0 || c[0] != '[' {
		return msg, nil
	}
	var parts [][]byte
	changed := false
	j := 0
	err := oai.Elements(c, func(p []byte) error {
		np := out.part(p, "messages["+strconv.Itoa(i)+"].content["+strconv.Itoa(j)+"]", sees, marker)
		changed = changed || np != nil
		if np == nil {
			np = p
		}
		parts = append(parts, np)
		j++
		return nil
	})
	if err != nil || !changed {
		return msg, err
	}
	b := make([]byte, 0, len(c))
	b = append(b, '[')
	for k, p := range parts {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	b = append(b, ']')
	return oai.Set(msg, "content", b)
}

// part returns the text part an image part becomes, or nil for a part that is not an
// image.
func (out *Images) part(p []byte, at string, sees bool, marker string) []byte {
	typ, _, _ := oai.Member(p, "type")
	if string(typ) != `"image_url"` {
		return nil
	}
	note := NoteCannotSee
	if sees {
		var url string
		if iu, ok, _ := oai.Member(p, "image_url"); ok {
			if u, ok, _ := oai.Member(iu, "url"); ok {
				iu = u
			}
			_ = json.Unmarshal(iu, &url) // not a string: no URL, a note
		}
		switch mt, data, ok := ParseDataURL(url); {
		case ok && strings.HasPrefix(mt, "image/"):
			out.Data = append(out.Data, data)
			return textPart(marker)
		case ok || strings.HasPrefix(strings.ToLower(url), "data:"):
			note = NoteBadData
		default:
			note = NoteNotFetched
		}
	}
	out.Notes = append(out.Notes, at+": "+strings.Trim(note, "[]"))
	return textPart(note)
}

// textPart is {"type":"text","text":s}.
func textPart(s string) []byte {
	var q bytes.Buffer
	e := json.NewEncoder(&q)
	e.SetEscapeHTML(false) // a marker such as <__media__> stays as the engine looks for it
	_ = e.Encode(s)
	b := make([]byte, 0, q.Len()+24)
	b = append(b, `{"type":"text","text":`...)
	b = append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
	return append(b, '}')
}

// ParseDataURL reads a base64 data: URL (RFC 2397: data:[<media type>][;<parameter>]*;base64,<data>)
// into its media type (lowercase, without parameters; "" when it names none) and its
// data as padded standard base64. ok is false for anything else: another scheme, no
// ";base64", data that is not base64 (whitespace included).
func ParseDataURL(s string) (mediaType, data string, ok bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return "", "", false
	}
	head, data, found := strings.Cut(s[5:], ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(head, ";")
	if len(params) < 2 || !strings.EqualFold(params[len(params)-1], "base64") {
		return "", "", false
	}
	mediaType = strings.ToLower(strings.TrimSpace(params[0]))
	if data, ok = padBase64(data); !ok {
		return "", "", false
	}
	return mediaType, data, true
}

// padBase64 checks that s is standard base64, padded or not, and returns it padded.
func padBase64(s string) (string, bool) {
	body := strings.TrimRight(s, "=")
	pad := len(s) - len(body)
	if len(body) == 0 || pad > 2 {
		return "", false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return "", false
		}
	}
	switch len(body) % 4 {
	case 0:
		if pad != 0 {
			return "", false
		}
		return s, true
	case 1:
		return "", false
	case 2:
		if pad != 0 && pad != 2 {
			return "", false
		}
		return body + "==", true
	default:
		if pad > 1 {
			return "", false
		}
		return body + "=", true
	}
}
