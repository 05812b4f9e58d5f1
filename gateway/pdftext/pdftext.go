package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// Limits bound what reading one PDF may cost. The zero value of each field is its default.
type Limits struct {
	// MaxBytes is the largest PDF read. If 0, 32 MiB.
	MaxBytes int
	// MaxDecodeBytes is the most a stream may decode to. If 0, 16 MiB.
	MaxDecodeBytes int64
	// MaxPages is how many pages are read; later pages are left out and the text ends
	// with a note saying so. If 0, 200.
	MaxPages int
	// MaxChars is the most text kept, in bytes; what is past it is cut at a character
	// boundary and the text ends with a note saying so. If 0, 400,000 (about 100,000
	// tokens).
	MaxChars int
	// MaxObjects is the most objects ("N G obj" written in the file, not those packed in
	// object streams) a PDF may have. pdfcpu rebuilds a missing or damaged
	// cross-reference table by scanning every object, in time that grows with the square
	// of their number (on one core: 30,000 without a table took 4.3 s; 100,000 had not finished at 8 s), so a larger file
	// is refused before it is parsed. A long report has a few thousand. If 0, 20,000.
	MaxObjects int
	// MaxTime bounds the reading of one PDF, as far as pdfcpu checks its context (between
	// pages here, and at points of its own parsing), a second line behind MaxObjects.
	// If 0, 10 seconds.
	MaxTime time.Duration
	// MaxDocuments is how many PDFs one request may have read (Budget); the rest get a
	// note. If 0, 16.
	MaxDocuments int
	// MaxTotalTime bounds the reading of all of one request's PDFs together (Budget).
	// If 0, 30 seconds.
	MaxTotalTime time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 32 << 20
	}
	if l.MaxDecodeBytes <= 0 {
		l.MaxDecodeBytes = 16 << 20
	}
	if l.MaxPages <= 0 {
		l.MaxPages = 200
	}
	if l.MaxChars <= 0 {
		l.MaxChars = 400_000
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = 20_000
	}
	if l.MaxTime <= 0 {
		l.MaxTime = 10 * time.Second
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = 16
	}
	if l.MaxTotalTime <= 0 {
		l.MaxTotalTime = 30 * time.Second
	}
	return l
}

// ErrNoText is the error for a PDF that parses but shows no readable text.
var ErrNoText = errors.New("the PDF has no text the gateway can read (scanned pages, or fonts that encode text as glyph codes)")

// Extract returns the text of the PDF in data, page by page (pages separated by a blank
// line), under lim.
func Extract(data []byte, lim Limits) (text string, err error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return "", fmt.Errorf("the PDF is %d bytes, over the gateway's limit of %d", len(data), lim.MaxBytes)
	}
	if !bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\n\f\r "), []byte("%PDF-")) {
		return "", errors.New("not a PDF (no %PDF- header)")
	}
	// "obj" is in "endobj" too: each object counts twice, once for its end.
	if n := bytes.Count(data, []byte("obj")); n > 2*lim.MaxObjects {
		return "", fmt.Errorf("the PDF has about %d objects, over the gateway's limit of %d", (n+1)/2, lim.MaxObjects)
	}
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("the PDF could not be parsed: %v", r)
		}
	}()
	deadline, cancel := context.WithTimeout(context.Background(), lim.MaxTime)
	defer cancel()
	tooLong := fmt.Errorf("the PDF took more than %v to read (a damaged or hostile file): the gateway stopped reading it", lim.MaxTime)
	ctx, err := pdfcpu.ReadWithContext(deadline, bytes.NewReader(data), config(lim))
	if deadline.Err() != nil {
		return "", tooLong
	}
	if err != nil {
		return "", fmt.Errorf("the PDF could not be parsed: %w", err)
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return "", fmt.Errorf("the PDF's pages could not be read: %w", err)
	}
	var out strings.Builder
	pages := ctx.PageCount
	cut := ""
	if pages > lim.MaxPages {
		pages, cut = lim.MaxPages, fmt.Sprintf("\n\n[pages %d to %d not read: the gateway reads %d pages at most]", lim.MaxPages+1, ctx.PageCount, lim.MaxPages)
	}
	for p := 1; p <= pages && out.Len() < lim.MaxChars; p++ {
		if deadline.Err() != nil { // a page's reading is bounded by MaxDecodeBytes
			return "", tooLong
		}
		r, err := pdfcpu.ExtractPageContent(ctx, p)
		if err != nil {
			return "", fmt.Errorf("page %d could not be read: %w", p, err)
		}
		content, err := io.ReadAll(io.LimitReader(r, lim.MaxDecodeBytes))
		if err != nil {
			return "", fmt.Errorf("page %d could not be read: %w", p, err)
		}
		var page strings.Builder
		showText(&page, content, lim.MaxChars-out.Len())
		if t := strings.TrimSpace(page.String()); t != "" {
			if out.Len() > 0 {
				out.WriteString("\n\n")
			}
			out.WriteString(t)
		}
	}
	s := strings.TrimSpace(out.String())
	if len(s) >= lim.MaxChars {
		s = truncate(s, lim.MaxChars)
		cut = fmt.Sprintf("\n\n[text cut at %d bytes: the gateway keeps %d at most]", lim.MaxChars, lim.MaxChars)
	}
	if !readable(s) {
		return "", ErrNoText
	}
	return s + cut, nil
}

// config is pdfcpu's configuration for reading, built here: pdfcpu's default one is read
// from (and first written to) the user's configuration directory.
func config(lim Limits) *model.Configuration {
	limits := model.DefaultResourceLimits()
	limits.MaxStreamBytes = int64(lim.MaxBytes)
	limits.MaxDecodeBytes = lim.MaxDecodeBytes
	limits.MaxImageBytes = lim.MaxDecodeBytes
	limits.MaxObjectCount = 1_000_000
	limits.MaxXRefEntries = 1_000_000
	limits.MaxObjectStreamCount = 100_000
	limits.MaxObjectStreamFirst = 1 << 20
	limits.MaxRecursionDepth = 64
	return &model.Configuration{
		Reader15:                  true,
		ValidationMode:            model.ValidationRelaxed,
		UnsupportedResourcePolicy: model.UnsupportedResourceSkip,
		Offline:                   true,
		Eol:                       "\n",
		Limits:                    limits,
		Cmd:                       model.EXTRACTCONTENT,
	}
}

// readable says whether s is text a model can use: some letters or digits, and few
// control characters (the mark of glyph codes read as Latin-1).
func readable(s string) bool {
	if s == "" {
		return false
	}
	var ctl, alnum int
	for _, r := range s {
		switch {
		case r < 0x20 && r != '\n' && r != '\t' && r != '\r', r >= 0x7f && r < 0xa0:
			ctl++
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r > 0xbf:
			alnum++
		}
	}
	n := utf8.RuneCountInString(s)
	return alnum > 0 && ctl*20 <= n
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
