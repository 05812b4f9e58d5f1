package pdftext

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/pdftest"
)

// TestBudget_BoundsARequestsPDFs: each PDF was bounded, a request's many were not (a
// history of documents is read again on every turn). A budget reads the first
// MaxDocuments and notes the rest, the same ones on every turn; once the request's time
// is spent, the rest are noted too.
func TestBudget_BoundsARequestsPDFs(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.MinimalPDF("BT /F1 12 Tf (Invoice 42) Tj ET"))
	b := NewBudget(Limits{MaxDocuments: 3})
	var read, noted int
	for range 5 {
		text, ok := b.FromBase64(pdf, "inv.pdf")
		switch {
		case ok && text == "Invoice 42":
			read++
		case !ok && strings.Contains(text, "more than 3 PDFs"):
			noted++
		default:
			t.Fatalf("unexpected %v %q", ok, text)
		}
	}
	if read != 3 || noted != 2 {
		t.Errorf("read %d, noted %d; want 3 and 2", read, noted)
	}

	// Time: a clock that moves 20 s per reading spends a 30 s budget in two.
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b = NewBudget(Limits{MaxTotalTime: 30 * time.Second})
	b.now = func() time.Time { clock = clock.Add(20 * time.Second); return clock }
	var oks []bool
	for range 3 {
		text, ok := b.FromBase64(pdf, "")
		oks = append(oks, ok)
		if !ok && !strings.Contains(text, "took more than 30s to read together") {
			t.Errorf("note %q", text)
		}
	}
	if oks[0] != true || oks[1] != true || oks[2] != false {
		t.Errorf("read %v, want the first two read and the third noted", oks)
	}
}
