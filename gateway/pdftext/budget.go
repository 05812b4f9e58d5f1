package pdftext

import (
	"fmt"
	"time"
)

// Budget is what the PDFs of one request may cost together. Limits bound one PDF; a
// request may carry many (its history keeps every document a conversation was sent, and
// each turn reads them again), so a request past MaxDocuments PDFs, or past
// MaxTotalTime spent reading them, gets the note in place of the rest. The count keeps
// the same documents read on every turn; the time is a second line for hostile files.
// A Budget is used by one request, from one goroutine.
type Budget struct {
	lim  Limits
	docs int
	left time.Duration
	now  func() time.Time
}

// NewBudget is a request's budget under lim.
func NewBudget(lim Limits) *Budget {
	lim = lim.withDefaults()
	return &Budget{lim: lim, left: lim.MaxTotalTime, now: time.Now}
}

// FromBase64 is the package's FromBase64 within the request's budget: each PDF gets
// its own limits, and at most the time the request has left.
func (b *Budget) FromBase64(b64, name string) (text string, ok bool) {
	if b.docs >= b.lim.MaxDocuments {
		return LeftOut(name, fmt.Sprintf("the request carries more than %d PDFs, the gateway's limit for one request; send the text of the others", b.lim.MaxDocuments)), false
	}
	if b.left <= 0 {
		return LeftOut(name, fmt.Sprintf("the request's PDFs took more than %v to read together, the gateway's limit", b.lim.MaxTotalTime)), false
	}
	b.docs++
	lim := b.lim
	lim.MaxTime = min(lim.MaxTime, b.left)
	start := b.now()
	text, ok = FromBase64(b64, name, lim)
	b.left -= b.now().Sub(start)
	return text, ok
}
