package vllm

import (
	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
)

// catalogFirst lays req's body out catalog first (backends.Request.CatalogFirst) where
// the model's format is Hermes, configured or defaulted: a leading system message with
// text moves behind an empty one (oai.SystemBehindEmpty). The engine renders the chat
// template itself, and Hermes/Qwen templates (Qwen2.5's, Qwen3's) write messages[0]'s
// text and then the tools into the first system turn and any later system message as a
// turn of its own, so the prompt becomes the tools first, the client's system prompt
// after them: sessions whose system prompts differ share the catalog's tokens in the
// prefix cache. Hermes' own tool-use templates already write the tools first; there the
// move adds one empty system turn after them.
//
// The body is left as it came when the request does not ask, the format is another
// (its templates keep their order; Llama 3.x's place the tools by a template variable,
// Mistral's and Gemma's refuse a system message after the first), there are no tools or
// tool_choice is "none" (SGLang then renders no tools, and the empty turn would buy
// nothing), or the messages do not begin with a system message that has text. Only the
// messages member changes, and in it only the new element; a body that does not parse
// goes as it is, for the engine to answer.
func (b *Backend) catalogFirst(body []byte, req *backends.Request) []byte {
	if !req.CatalogFirst || b.format.Name != masking.Hermes().Name {
		return body
	}
	var obj *oai.Object
	var err error
	if req.ToolsID != "" {
		obj, err = oai.ParseObjectKnown(body, b.known.scope(req.ToolsID), "tools")
	} else {
		obj, err = oai.ParseObject(body)
	}
	if err != nil {
		return body
	}
	if n, ok := obj.Len("tools"); !ok || n == 0 {
		return body
	}
	if tc, ok := obj.Get("tool_choice"); ok && string(tc) == `"none"` {
		return body
	}
	msgs, _ := obj.Get("messages")
	moved, ok := oai.SystemBehindEmpty(msgs)
	if !ok {
		return body
	}
	return obj.Set("messages", moved)
}
