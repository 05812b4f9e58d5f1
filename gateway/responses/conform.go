package responses

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
)

// The response object as the Open Responses specification requires it
// (https://www.openresponses.org, ResponseResource): every member present, the sampling
// parameters the request used (presence_penalty and frequency_penalty as sent, else 0),
// the service tier ("default": the gateway has no other), and each function tool whole.

// echoTools is the tools array a response echoes: the request's, each function tool
// with the members FunctionTool requires (description and parameters null when the
// request had none, strict true when it said nothing, OpenAI's default), other tools as
// sent. A tool that is not an object, or an array that is not one, goes out as sent.
func echoTools(raw []byte) []byte {
	if raw == nil || string(raw) == "null" {
		return []byte("[]")
	}
	items := elements(raw)
	changed := false
	out := make([][]byte, len(items))
	for i, t := range items {
		out[i] = t
		o, err := oai.ParseObject(t)
		if err != nil {
			continue
		}
		if typ, _ := o.Get("type"); string(typ) != `"function"` {
			continue
		}
		var edits []oai.Edit
		for _, m := range []struct{ key, def string }{{"description", "null"}, {"parameters", "null"}, {"strict", "true"}} {
			v, ok := o.Get(m.key)
			if !ok || (m.key == "strict" && string(v) == "null") {
				edits = append(edits, oai.Edit{Key: m.key, Value: []byte(m.def)})
			}
		}
		if len(edits) > 0 {
			out[i], changed = o.Edit(edits...), true
		}
	}
	if !changed {
		return raw
	}
	return array(out)
}

// CompactionUserItem is a user message of the input as /v1/responses/compact's output
// lists it: a Message item (id, status "completed", role "user", content parts; a string
// content becomes one input_text part), with the id given. An item it cannot read goes
// out as sent.
func CompactionUserItem(item json.RawMessage, id string) []byte {
	o, err := oai.ParseObject(item)
	if err != nil {
		return item
	}
	content, _ := o.Get("content")
	if len(content) > 0 && content[0] == '"' {
		content = array([][]byte{newObj(len(content)+32).str("type", "input_text").raw("text", content).done()})
	} else if len(content) == 0 || content[0] != '[' {
		content = []byte("[]")
	}
	return newObj(len(content)+len(id)+80).str("id", id).str("type", "message").str("status", "completed").
		str("role", "user").raw("content", content).done()
}
