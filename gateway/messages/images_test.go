package messages

import (
	"strings"
	"testing"
)

// TestFileImageInHistory: an image by Files API id is refused in the turn being sent
// (decode_test's "image from a file") but, in a message an assistant message follows,
// becomes a note and a warning naming it, so a conversation carrying it goes on.
func TestFileImageInHistory(t *testing.T) {
	file := `{"type":"image","source":{"type":"file","file_id":"file_1"}}`
	r := mustDecode(t, req(`[{"role":"user","content":[{"type":"text","text":"see"},`+file+`]},{"role":"assistant","content":"seen"},{"role":"user","content":"and?"}]`), Options{})
	msgs := messagesOf(r)
	want := `{"role":"user","content":[{"type":"text","text":"see"},{"type":"text","text":"[image omitted: the gateway cannot read images from the Files API]"}]}`
	if len(msgs) != 3 || msgs[0] != want {
		t.Errorf("messages %q, want the first %s", msgs, want)
	}
	if len(r.Warnings) != 1 || r.Warnings[0] != "messages.0.content.1.source: image omitted: the gateway cannot read images from the Files API" {
		t.Errorf("warnings %q", r.Warnings)
	}
	// In the turn being sent, after the last assistant message, it is still refused; so
	// it is before an assistant message that prefills that turn's answer.
	_, e := Decode([]byte(req(`[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[`+file+`]}]`)), Options{})
	if e == nil || e.Param != "messages.2.content.0.source.type" || !strings.Contains(e.Message, "Files API") || e.Status != 400 {
		t.Errorf("error %+v, want a 400 naming messages.2.content.0.source.type", e)
	}
	_, e = Decode([]byte(req(`[{"role":"user","content":[`+file+`]},{"role":"assistant","content":"The answer is"}]`)), Options{})
	if e == nil || e.Param != "messages.0.content.0.source.type" {
		t.Errorf("prefilled: error %+v, want a 400 naming messages.0.content.0.source.type", e)
	}
}
