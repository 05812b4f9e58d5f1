package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// AnchorOf names a client message by its content, for Splice.Anchor: the hex of the first
// 16 bytes of the SHA-256 of the message's JSON with insignificant whitespace removed, so
// a client that resends the message re-indented still names the same one. A message that
// is not valid JSON is hashed as it is.
func AnchorOf(msg json.RawMessage) string {
	var buf bytes.Buffer
	buf.Grow(len(msg))
	b := []byte(msg)
	if json.Compact(&buf, msg) == nil {
		b = buf.Bytes()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Place says where each splice goes back into client, the messages of a later request:
// the number of client messages that precede it, or -1 when it is dropped.
//
// A splice with an Anchor goes after the client message whose AnchorOf is the anchor: the
// one at its old position when that still matches, else the nearest match before it (an
// agent that compacts its history removes what came earlier), else the nearest after it.
// When no message matches (the agent summarised or removed it), the splice is dropped: the
// exchange is gone from the engine's view, but what it loaded stays loaded, since the
// loaded set is kept apart from splices. A splice without an anchor (kept before anchors
// were recorded) goes back by position alone, and is dropped past the end of client.
func Place(client []json.RawMessage, splices []Splice) []int {
	out := make([]int, len(splices))
	var anchors []string // AnchorOf each client message, computed on first need
	anchorAt := func(i int) string {
		if anchors == nil {
			anchors = make([]string, len(client))
		}
		if anchors[i] == "" {
			anchors[i] = AnchorOf(client[i])
		}
		return anchors[i]
	}
	for k, sp := range splices {
		out[k] = -1
		if sp.Anchor == "" {
			if sp.After >= 0 && sp.After <= len(client) {
				out[k] = sp.After
			}
			continue
		}
		at := sp.After - 1 // the index of the message it followed
		if at >= 0 && at < len(client) && anchorAt(at) == sp.Anchor {
			out[k] = sp.After
			continue
		}
		for j := min(at-1, len(client)-1); j >= 0 && out[k] < 0; j-- {
			if anchorAt(j) == sp.Anchor {
				out[k] = j + 1
			}
		}
		for j := max(at+1, 0); j < len(client) && out[k] < 0; j++ {
			if anchorAt(j) == sp.Anchor {
				out[k] = j + 1
			}
		}
	}
	return out
}
