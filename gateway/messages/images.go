package messages

import (
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// fileImageNote stands in the engine's prompt for an image by Files API id in the
// conversation's history.
const fileImageNote = "[image omitted: the gateway cannot read images from the Files API]"

// lastAnswered is the index of the last assistant message of msgs (-1 when none) but
// the final one, which is a prefill of the answer to the turn being sent: the messages
// before it are history, already answered.
func lastAnswered(msgs [][]byte) int {
	last := -1
	for i, m := range msgs[:max(len(msgs)-1, 0)] {
		if role, _, _ := oai.Member(m, "role"); string(role) == `"assistant"` {
			last = i
		}
	}
	return last
}

// image translates an image block (imagePart). An image by Files API id (source.type
// "file") the gateway cannot read: in the turn being sent it is refused, naming the
// field; in the history (a model switched mid-conversation, an earlier upstream that
// could) it becomes a note, listed in Request.Warnings, so the conversation goes on.
func (t *translator) image(p string, o *oai.Object) (part, *door.Error) {
	if t.historic {
		if src, ok := o.Get("source"); ok {
			if typ, _, _ := oai.Member(src, "type"); string(typ) == `"file"` {
				t.r.Warnings = append(t.r.Warnings, p+".source: image omitted: the gateway cannot read images from the Files API")
				return textPart(appendString(nil, fileImageNote)), nil
			}
		}
	}
	return imagePart(p, o)
}
