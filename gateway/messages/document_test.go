package messages

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/internal/pdftest"
)

// A PDF becomes its text; one the gateway cannot read, and a document it would have to
// fetch, become a note in its place and a warning, and the request goes on: agents send
// the document again on every later turn.
func TestDecode_PDFDocumentsBecomeTextOrANote(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("BT /F1 12 Tf (Invoice 42) Tj T* (Total: 10 EUR) Tj ET"))
	scanned := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("0 0 m 10 10 l S"))
	body := req(`[{"role":"user","content":[` +
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + pdf + `"},"title":"inv.pdf"},` +
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + scanned + `"},"title":"scan"},` +
		`{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}},` +
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"%%%"}},` +
		`{"type":"text","text":"sum these"}]}]`)
	r, derr := Decode([]byte(body), Options{})
	if derr != nil {
		t.Fatalf("refused: %v", derr)
	}
	want := `{"role":"user","content":[{"type":"text","text":"Invoice 42\nTotal: 10 EUR"},` +
		`{"type":"text","text":"[maskgate: the document \"scan\" was left out: the PDF has no text the gateway can read (scanned pages, or fonts that encode text as glyph codes)]"},` +
		`{"type":"text","text":"[maskgate: a document was left out: the gateway does not fetch url sources; send the PDF as base64 or its text as a text source]"},` +
		`{"type":"text","text":"[maskgate: a document was left out: its data is not valid base64]"},` +
		`{"type":"text","text":"sum these"}]}`
	if got := string(r.Messages[len(r.Messages)-1]); got != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}
	if len(r.Warnings) != 3 {
		t.Fatalf("warnings %q, want three", r.Warnings)
	}
	var at []string
	for _, w := range r.Warnings {
		p, _, _ := strings.Cut(w, ": ")
		at = append(at, p)
	}
	if d := cmp.Diff([]string{"messages.0.content.1", "messages.0.content.2", "messages.0.content.3"}, at); d != "" {
		t.Errorf("warning paths (-want +got):\n%s", d)
	}
}

// TestDecode_PDFsPerRequestBounded: seventeen PDFs in one request (a conversation that
// carries its documents in history sends them every turn) were all read; now the first
// sixteen are and the seventeenth gets the note and a warning.
func TestDecode_PDFsPerRequestBounded(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("BT /F1 12 Tf (Invoice 42) Tj ET"))
	doc := `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + pdf + `"}}`
	body := req(`[{"role":"user","content":[` + strings.Repeat(doc+",", 17) + `{"type":"text","text":"sum these"}]}]`)
	r, derr := Decode([]byte(body), Options{})
	if derr != nil {
		t.Fatalf("refused: %v", derr)
	}
	msg := string(r.Messages[len(r.Messages)-1])
	if n := strings.Count(msg, "Invoice 42"); n != 16 {
		t.Errorf("%d documents read, want 16", n)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "messages.0.content.16: ") || !strings.Contains(r.Warnings[0], "more than 16 PDFs") {
		t.Errorf("warnings %q, want one on the seventeenth document", r.Warnings)
	}
}
