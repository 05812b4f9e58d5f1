package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

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

// inputPrefixes are the id prefixes of listed input items by type.
var inputPrefixes = map[string]string{"message": "msg_", "function_call": "fc_", "function_call_output": "fco_", "reasoning": "rs_",
	"custom_tool_call": "ctc_", "custom_tool_call_output": "ctco_", "compaction": "cmp_"}

// InputItem is input item i of response respID as GET /v1/responses/{id}/input_items
// lists it: with an id (its own, else one made of the response id and i, the same on
// every read, so a page's last id is a cursor), and a message as the API returns one
// (type "message", status "completed", string content as one input_text part, or
// output_text for an assistant's). Other members are as sent.
func InputItem(respID string, i int, item json.RawMessage) []byte {
	o, err := oai.ParseObject(item)
	if err != nil {
		return item
	}
	var edits []oai.Edit
	typ, _ := o.Get("type")
	role, _ := o.Get("role")
	isMessage := string(typ) == `"message"` || (len(typ) == 0 || string(typ) == "null") && len(role) > 0
	if id, _ := o.Get("id"); len(id) < 3 || id[0] != '"' {
		prefix := "item_"
		if isMessage {
			prefix = "msg_"
		} else if p, ok := inputPrefixes[unquote(typ)]; ok {
			prefix = p
		}
		sum := sha256.Sum256([]byte(respID + "/input/" + strconv.Itoa(i)))
		edits = append(edits, oai.Edit{Key: "id", Value: quote(prefix + responsePart(respID) + hex.EncodeToString(sum[:12]))})
	}
	if isMessage {
		if string(typ) != `"message"` {
			edits = append(edits, oai.Edit{Key: "type", Value: []byte(`"message"`)})
		}
		if st, _ := o.Get("status"); len(st) == 0 || string(st) == "null" {
			edits = append(edits, oai.Edit{Key: "status", Value: []byte(`"completed"`)})
		}
		if content, _ := o.Get("content"); len(content) > 0 && content[0] == '"' {
			part := "input_text"
			if string(role) == `"assistant"` {
				part = "output_text"
			}
			p := newObj(len(content)+48).str("type", part).raw("text", content)
			if part == "output_text" {
				p.raw("annotations", []byte("[]"))
			}
			edits = append(edits, oai.Edit{Key: "content", Value: array([][]byte{p.done()})})
		}
	}
	if len(edits) == 0 {
		return item
	}
	return o.Edit(edits...)
}

// ItemID is an item's "id", "" when it has none.
func ItemID(item []byte) string {
	o, err := oai.ParseObject(item)
	if err != nil {
		return ""
	}
	id, _ := o.Get("id")
	if len(id) == 0 || id[0] != '"' {
		return ""
	}
	return unquote(id)
}

// ItemList is a page of items in OpenAI's list shape: {"object":"list","data",
// "first_id","last_id","has_more"}, the ids null when the page is empty.
func ItemList(items [][]byte, ids []string, more bool) []byte {
	data := array(items)
	o := newObj(len(data)+160).str("object", "list").raw("data", data)
	if len(ids) == 0 {
		o.raw("first_id", []byte("null")).raw("last_id", []byte("null"))
	} else {
		o.str("first_id", ids[0]).str("last_id", ids[len(ids)-1])
	}
	return o.raw("has_more", []byte(strconv.FormatBool(more))).done()
}
