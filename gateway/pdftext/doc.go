// Package pdftext reads the text of a PDF for engines that take no document input: the
// Messages door's PDF document blocks and the Responses door's input_file parts become
// that text. Parsing is pdfcpu's (github.com/pdfcpu/pdfcpu, a maintained pure-Go PDF
// library: the cross-reference table, object streams, filters, encryption with an empty
// password), under Limits: the PDF's size, its objects (pdfcpu rebuilds a damaged
// cross-reference table in time that grows with the square of their number), the time
// spent (pdfcpu's context, checked where it checks it and between pages), the bytes a
// stream may decode to, the pages read and the text kept. This package reads each page's content stream for its
// text-showing operators (Tj, TJ, ', ") and writes their strings out, byte for byte as
// Latin-1, with line breaks where the text moves to a new line.
//
// What it cannot read is an error, never garbage passed to a model: a PDF pdfcpu refuses,
// one past a limit, one with no text (scanned pages), one whose fonts encode text in
// codes that are not characters (CID fonts without a simple encoding; most PDFs written
// with embedded subset fonts of non-Latin scripts). The doors then leave the document
// out with a note the model reads and a warning the client gets.
//
// Never: a panic on malformed input (pdfcpu's own are recovered into errors), memory
// or time beyond Limits, package-level state (pdfcpu's configuration is built here, never read
// from or written to the user's configuration directory).
package pdftext
