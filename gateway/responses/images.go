package responses

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
)

// fileImageNote stands in the engine's prompt for an image by file_id in the input's
// history.
const fileImageNote = "[image omitted: the gateway cannot resolve images by file_id]"

// answerItems are the input items a model wrote (with a role of assistant, a message),
// and item_reference, which names one of its stored output items.
var answerItems = map[string]bool{
	"function_call": true, "custom_tool_call": true, "reasoning": true, "tool_search_call": true,
	"item_reference": true,
}

// lastAnswered is the index of the last item of input the model wrote (-1 when none):
// the items before it are history, already answered.
func lastAnswered(input []json.RawMessage) int {
	last := -1
	for i, it := range input {
		typ, _, _ := oai.Member(it, "type")
		role, _, _ := oai.Member(it, "role")
		if answerItems[unquote(typ)] || string(role) == `"assistant"` {
			last = i
		}
	}
	return last
}

// imageLeftOut is the text part an input_image by file_id in the history becomes, with a
// warning naming it (param): in the turn being sent it is refused, but a conversation
// that carries one (a model switched mid-conversation, an earlier upstream that could
// resolve it) goes on.
func (d *decoder) imageLeftOut(param string) []byte {
	d.r.Warnings = append(d.r.Warnings, param+": image omitted: the gateway cannot resolve images by file_id")
	return newObj(len(fileImageNote)+32).str("type", "text").str("text", fileImageNote).done()
}
