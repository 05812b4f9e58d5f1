package responses

import (
	"strings"
	"testing"
)

// TestDecode_FileImageInHistory: an input_image by file_id is refused in the turn being
// sent (decode_test's "image by file id") but, in an item the model's answer follows,
// becomes a note and a warning naming it, so a conversation carrying it goes on.
func TestDecode_FileImageInHistory(t *testing.T) {
	img := `{"type":"input_image","file_id":"file-1","detail":"auto"}`
	for _, answer := range []string{
		`{"role":"assistant","content":[{"type":"output_text","text":"a dot"}]}`,
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}`,
	} {
		body := `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"see"},` + img + `]},` + answer + `,{"role":"user","content":"and?"}]}`
		r, derr := Decode([]byte(body), Options{})
		if derr != nil {
			t.Fatalf("refused: %+v", derr)
		}
		chat := string(r.ChatBody(nil))
		want := `{"role":"user","content":[{"type":"text","text":"see"},{"type":"text","text":"[image omitted: the gateway cannot resolve images by file_id]"}]}`
		if !strings.Contains(chat, want) || strings.Contains(chat, "file-1") {
			t.Errorf("chat body lacks\n%s\nin\n%s", want, chat)
		}
		if len(r.Warnings) != 1 || r.Warnings[0] != "input[0].content[1].file_id: image omitted: the gateway cannot resolve images by file_id" {
			t.Errorf("warnings %q", r.Warnings)
		}
	}
	// After the model's last answer it is the turn being sent: still a 400 naming it.
	_, derr := Decode([]byte(`{"model":"m","input":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[`+img+`]}]}`), Options{})
	if derr == nil || derr.Param != "input[2].content[0].file_id" || derr.Status != 400 || derr.Code != "unsupported_value" {
		t.Errorf("error %+v, want a 400 naming input[2].content[0].file_id", derr)
	}
}
