package pdftext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/pdftest"
)

func TestExtract_ReadsTheTextOfEachPage(t *testing.T) {
	pdf := pdftest.MinimalPDF(
		"BT /F1 12 Tf 72 720 Td (Quarterly report) Tj 0 -14 Td (Revenue rose \\(a lot\\)) Tj ET",
		"BT /F1 12 Tf 72 720 Td [(Hel) 20 (lo) -300 (world)] TJ T* <48657821> Tj ET",
	)
	got, err := Extract(pdf, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Quarterly report\nRevenue rose (a lot)\n\nHello world\nHex!"
	if got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

func TestExtract_Limits(t *testing.T) {
	pdf := pdftest.MinimalPDF("BT (one) Tj ET", "BT (two) Tj ET", "BT (three) Tj ET")
	got, err := Extract(pdf, Limits{MaxPages: 2})
	if err != nil || got != "one\n\ntwo\n\n[pages 3 to 3 not read: the gateway reads 2 pages at most]" {
		t.Errorf("two pages of three: %q, %v", got, err)
	}
	long := pdftest.MinimalPDF("BT (" + strings.Repeat("abcd ", 100) + ") Tj ET")
	got, err = Extract(long, Limits{MaxChars: 50})
	if err != nil || !strings.HasPrefix(got, strings.Repeat("abcd ", 10)[:50]) || !strings.HasSuffix(got, "[text cut at 50 bytes: the gateway keeps 50 at most]") {
		t.Errorf("cut at 50: %q, %v", got, err)
	}
	if _, err := Extract(pdf, Limits{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), "over the gateway's limit of 100") {
		t.Errorf("over MaxBytes: %v", err)
	}
}

func TestExtract_RefusesWhatItCannotRead(t *testing.T) {
	for name, data := range map[string][]byte{
		"not a PDF":   []byte("hello"),
		"empty":       nil,
		"header only": []byte("%PDF-1.4\n"),
		"no text":     pdftest.MinimalPDF("0 0 m 100 100 l S"),
		"glyph codes": pdftest.MinimalPDF("BT <0001000200030004000500060007> Tj ET"),
		"truncated":   pdftest.MinimalPDF("BT (text) Tj ET")[:200],
	} {
		if got, err := Extract(data, Limits{}); err == nil {
			t.Errorf("%s: read as %q", name, got)
		}
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(pdftest.MinimalPDF("BT (a) Tj ET"))
	f.Add(pdftest.MinimalPDF("BT [(a) -500 (b)] TJ ET", "BI /W 1 ID \x00\x01 EI (c) Tj"))
	f.Add([]byte("%PDF-1.7\n1 0 obj << /Length 99999999 >> stream\n"))
	f.Add(manyObjects(30_000)) // took 4.3 s before MaxObjects; 100,000 did not finish
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Extract(data, Limits{MaxChars: 1000})
		if err == nil && len(s) > 1000+200 {
			t.Fatalf("%d bytes of text past MaxChars 1000", len(s))
		}
	})
}

func FuzzShowText(f *testing.F) {
	f.Add([]byte("BT (a\\)b\\101) Tj [<41> -120 (c)] TJ ' ET"))
	f.Add([]byte("(unterminated \\"))
	f.Fuzz(func(t *testing.T, c []byte) {
		var out strings.Builder
		showText(&out, c, 500)
		if out.Len() > 500+4*len(c) {
			t.Fatalf("%d bytes from %d", out.Len(), len(c))
		}
	})
}

// manyObjects is a PDF of n objects that link each to the next, with no
// cross-reference table: pdfcpu rebuilds one by scanning them, in time that grows with
// the square of n (100,000 had not finished in 8 s).
func manyObjects(n int) []byte {
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d 0 obj\n<< /K %d 0 R >>\nendobj\n", i, i+1)
	}
	return []byte(b.String())
}

func TestExtract_TooManyObjectsIsRefusedBeforeParsing(t *testing.T) {
	_, err := Extract(manyObjects(100_000), Limits{})
	if err == nil || !strings.Contains(err.Error(), "the PDF has about 100000 objects, over the gateway's limit of 20000") {
		t.Fatalf("100,000 objects: %v", err)
	}
	// Under the limit the same shape is read (and has no pages): the limit is what
	// refused it.
	if _, err := Extract(manyObjects(100), Limits{}); err == nil || strings.Contains(err.Error(), "limit") {
		t.Errorf("100 objects: %v", err)
	}
}
