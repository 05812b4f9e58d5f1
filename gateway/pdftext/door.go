package pdftext

import (
	"encoding/base64"
	"fmt"
)

// FromBase64 is a door's reading of a base64 PDF named name (a title or file name, ""
// when none): the text to send in the document's place, and whether it was read. When it
// was not, the text is a note saying that the document was left out and why, for the
// model to read in its place and the client to get as a warning; the request goes on
// either way, so a conversation that carries the document in its history is never
// refused on every later turn.
func FromBase64(b64, name string, lim Limits) (text string, ok bool) {
	lim = lim.withDefaults()
	if base64.StdEncoding.DecodedLen(len(b64)) > lim.MaxBytes+3 {
		return LeftOut(name, fmt.Sprintf("the PDF is over the gateway's limit of %d bytes", lim.MaxBytes)), false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return LeftOut(name, "its data is not valid base64"), false
	}
	s, err := Extract(data, lim)
	if err != nil {
		return LeftOut(name, err.Error()), false
	}
	return s, true
}

// LeftOut is the note that stands in for a document the gateway could not give the
// model.
func LeftOut(name, why string) string {
	if name != "" {
		return fmt.Sprintf("[maskgate: the document %q was left out: %s]", name, why)
	}
	return "[maskgate: a document was left out: " + why + "]"
}
