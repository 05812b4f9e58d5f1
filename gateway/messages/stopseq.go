package messages

import (
	"encoding/json"
	"strings"
)

// StopSequence is told the stop string that ended the answer, where the backend says
// (vLLM's and the llama-server backend's stop_reason); End reports it as stop_sequence
// when it is one of the client's stop_sequences.
func (w *Writer) StopSequence(s string) { w.matched = s }

// StopSeqTail is how many of the answer's last bytes End looks in for a client's stop
// sequence that the engine left in the text.
const StopSeqTail = 256

// stopSequence is the client's stop sequence that ended the answer: the one the backend
// named, else one the text ends with; "" when none did.
func (w *Writer) stopSequence() string {
	if w.r == nil || len(w.r.Stop) == 0 {
		return ""
	}
	var stops []string
	if json.Unmarshal(w.r.Stop, &stops) != nil {
		return ""
	}
	for _, s := range stops {
		if s != "" && s == w.matched {
			return s
		}
	}
	if w.matched != "" {
		return ""
	}
	for _, s := range stops {
		if s != "" && strings.HasSuffix(w.tail, s) {
			return s
		}
	}
	return ""
}

// appendStopSeq writes stop_sequence's value: the matched sequence, or null.
func (w *Writer) appendStopSeq(b []byte) []byte {
	if w.stopSeq == "" {
		return append(b, "null"...)
	}
	return appendString(b, w.stopSeq)
}
