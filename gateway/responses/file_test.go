package responses

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/pdftest"
)

// An input_file becomes its text (a PDF's, a text file's); one the gateway cannot read or
// would have to fetch becomes a note and a warning, and the request goes on.
func TestDecode_InputFilesBecomeTextOrANote(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("BT (Release plan: v2 in May) Tj ET"))
	txt := base64.StdEncoding.EncodeToString([]byte("plain notes"))
	body := `{"model":"m","input":[{"role":"user","content":[` +
		`{"type":"input_file","filename":"plan.pdf","file_data":"data:application/pdf;base64,` + pdf + `"},` +
		`{"type":"input_file","file_data":"data:text/plain;base64,` + txt + `"},` +
		`{"type":"input_file","file_id":"file-1"},` +
		`{"type":"input_file","filename":"x.png","file_data":"data:image/png;base64,AAAA"},` +
		`{"type":"input_text","text":"when?"}]},` +
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c","output":[{"type":"input_file","file_data":"` + pdf + `"}]}]}`
	r, derr := Decode([]byte(body), Options{})
	if derr != nil {
		t.Fatalf("refused: %v", derr)
	}
	chat := string(r.ChatBody(nil))
	for _, want := range []string{
		`{"role":"user","content":[{"type":"text","text":"Release plan: v2 in May"},{"type":"text","text":"plain notes"},` +
			`{"type":"text","text":"[maskgate: a document was left out: the gateway does not fetch files by file_id; send file_data or the file's text as input_text]"},` +
			`{"type":"text","text":"[maskgate: the document \"x.png\" was left out: the gateway reads PDF and text files only, not image/png]"},` +
			`{"type":"text","text":"when?"}]}`,
		`{"role":"tool","tool_call_id":"c","content":"Release plan: v2 in May"}`,
	} {
		if !strings.Contains(chat, want) {
			t.Errorf("chat body lacks\n%s\nin\n%s", want, chat)
		}
	}
	if len(r.Warnings) != 2 || !strings.HasPrefix(r.Warnings[0], "input[0].content[2]: ") || !strings.HasPrefix(r.Warnings[1], "input[0].content[3]: ") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
