package responses

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// Item ids name the response that holds them: an output item's id is its prefix, the
// 24 hex digits of its response's id ("resp_" left off) and 24 of a digest of the
// response id and the item's index. A client that sends an item back as
// {"type":"item_reference","id"} (the Vercel AI SDK does, for every earlier output
// item, when store is true) names the response to read it from.

// itemPrefixes are the prefixes of the output items' ids.
var itemPrefixes = []string{"msg_", "rs_", "fc_", "ctc_", "tsc_", "sh_", "lsh_", "apc_"}

// responsePart is what of a response id its items' ids carry: the gateway's own ids'
// 24 hex digits, or for another id (a test's) a digest of it, which names nothing.
func responsePart(id string) string {
	if rest, ok := strings.CutPrefix(id, "resp_"); ok && len(rest) == 24 && isHex(rest) {
		return rest
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ItemResponse is the id of the response whose output item id is, "" when id is not
// an output item's id the gateway made.
func ItemResponse(id string) string {
	for _, p := range itemPrefixes {
		if rest, ok := strings.CutPrefix(id, p); ok && len(rest) == 48 && isHex(rest) {
			return "resp_" + rest[:24]
		}
	}
	return ""
}

// OutputItem is the output item id of the response object body, nil when it has none.
func OutputItem(body []byte, id string) json.RawMessage {
	o, err := oai.ParseObject(body)
	if err != nil {
		return nil
	}
	out, _ := o.Get("output")
	want := quote(id)
	for _, it := range elements(out) {
		io, err := oai.ParseObject(it)
		if err != nil {
			continue
		}
		if v, _ := io.Get("id"); bytes.Equal(v, want) {
			return it
		}
	}
	return nil
}

// isReference reports whether an input item is an item_reference: its type says so, or
// it has an id and neither type nor role (the type is optional, and the openai SDKs
// leave it out).
func isReference(it []byte) bool {
	if !bytes.Contains(it, []byte(`"item_reference"`)) && (bytes.Contains(it, []byte(`"type"`)) || bytes.Contains(it, []byte(`"role"`))) {
		return false
	}
	o, err := oai.ParseObject(it)
	if err != nil {
		return false // the item's own translation reports it
	}
	typ, hasType := o.Get("type")
	if hasType && string(typ) != "null" {
		return string(typ) == `"item_reference"`
	}
	_, hasRole := o.Get("role")
	_, hasID := o.Get("id")
	return !hasRole && hasID
}

// reference is the item an item_reference input item names, from Options.Reference; a
// reference to no item the caller may read is a 400 naming the id.
func (d *decoder) reference(raw []byte, param string) (json.RawMessage, *door.Error) {
	f, e := object(raw, param)
	if e != nil {
		return nil, e
	}
	id, e := f.need("id")
	if e != nil {
		return nil, e
	}
	var item json.RawMessage
	if d.opt.Reference != nil {
		if item, e = d.opt.Reference(id); e != nil {
			return nil, e
		}
	}
	if item == nil || bytes.Contains(item, []byte(`"item_reference"`)) {
		return nil, bad(f.param("id"), "item_not_found",
			"Item with id '%s' not found: input item '%s' is an item_reference, and no response this caller stored (store: true, within the store's time to live) has an output item with that id; send the item itself instead.", id, param)
	}
	return item, nil
}
