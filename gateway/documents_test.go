package gateway_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/pdftest"
)

// A PDF document through the Messages door reaches the engine as its text; one the
// gateway cannot read is left out with a note for the model and a warning header for
// the client, and the turn is answered, as is every later turn that sends it again.
func TestDoors_MessagesPDFDocument(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("BT /F1 12 Tf (Meeting notes: ship on Friday) Tj ET"))
	broken := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\nnot really"))
	sc := &scripted{replies: []string{textReply("ok", 5, 0), textReply("ok", 5, 0)}}
	gw := doorsWith(t, sc, nil)
	turn := `{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + pdf + `"}},` +
		`{"type":"document","title":"old.pdf","source":{"type":"base64","media_type":"application/pdf","data":"` + broken + `"}},{"type":"text","text":"when do we ship?"}]}`
	status, h, out := call(t, gw, "POST", "/v1/messages", aliceKey, `{"model":"m1","max_tokens":9,"messages":[`+turn+`]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	got := string(sc.bodies[0]["messages"])
	if !strings.Contains(got, `{"type":"text","text":"Meeting notes: ship on Friday"}`) {
		t.Errorf("the engine did not get the PDF's text: %s", got)
	}
	if !strings.Contains(got, `[maskgate: the document \"old.pdf\" was left out: the PDF could not be parsed`) {
		t.Errorf("the engine did not get the note for the unreadable PDF: %s", got)
	}
	if w := h.Values(gateway.HeaderWarning); len(w) != 1 || !strings.HasPrefix(w[0], `messages.0.content.1: [maskgate: the document "old.pdf" was left out`) {
		t.Errorf("warning header %q", w)
	}
	// The next turn resends the documents in its history, and is answered too.
	next := `{"model":"m1","max_tokens":9,"messages":[` + turn + `,{"role":"assistant","content":"Friday."},{"role":"user","content":"thanks"}]}`
	if status, _, out := call(t, gw, "POST", "/v1/messages", aliceKey, next); status != 200 {
		t.Fatalf("second turn: status %d: %s", status, out)
	}
}
