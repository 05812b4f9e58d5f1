package redisstore

import (
	"encoding/binary"
	"encoding/json"

	"github.com/maskgate/maskgate/toolsearch/state"
)

// Splice formats: 1 has no anchor; 2 (written only for a splice with one) carries the
// anchor, its length as a uvarint and its bytes, after After. Both are read, so threads
// kept before anchors existed still load, and a reader that knows only format 1 still
// reads the splices without anchors.
const (
	spliceFormat         = 1
	spliceFormatAnchored = 2
)

func encodeSplice(sp state.Splice) []byte {
	size := 1 + 3*binary.MaxVarintLen64 + len(sp.Anchor)
	for _, m := range sp.Messages {
		size += binary.MaxVarintLen64 + len(m)
	}
	b := make([]byte, 0, size)
	if sp.Anchor == "" {
		b = append(b, spliceFormat)
		b = binary.AppendVarint(b, int64(sp.After))
	} else {
		b = append(b, spliceFormatAnchored)
		b = binary.AppendVarint(b, int64(sp.After))
		b = binary.AppendUvarint(b, uint64(len(sp.Anchor)))
		b = append(b, sp.Anchor...)
	}
	if sp.Messages == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(sp.Messages))+1)
	for _, m := range sp.Messages {
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	}
	return b
}

// decodeSplice reads an encoded splice; false for anything malformed.
func decodeSplice(s string) (state.Splice, bool) {
	b := []byte(s)
	if len(b) == 0 || (b[0] != spliceFormat && b[0] != spliceFormatAnchored) {
		return state.Splice{}, false
	}
	format := b[0]
	b = b[1:]
	after, n := binary.Varint(b)
	if n <= 0 {
		return state.Splice{}, false
	}
	b = b[n:]
	var anchor string
	if format == spliceFormatAnchored {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return state.Splice{}, false
		}
		anchor = string(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return state.Splice{}, false
	}
	b = b[n:]
	sp := state.Splice{After: int(after), Anchor: anchor}
	if count == 0 {
		return sp, len(b) == 0
	}
	sp.Messages = make([]json.RawMessage, count-1)
	for i := range sp.Messages {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return state.Splice{}, false
		}
		if l > 0 {
			sp.Messages[i] = json.RawMessage(b[n : n+int(l) : n+int(l)])
		}
		b = b[n+int(l):]
	}
	return sp, len(b) == 0
}
