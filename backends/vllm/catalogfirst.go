package vllm

import (
	"context"
	"errors"
	"net/http"

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
//
// A template that refuses the layout (one that raises on a system message after the
// first, as Gemma's does, served under the default format) answers 400; the request is
// then sent again in the client's order (catalogFirstOrNot), and if that one is taken
// the backend keeps the template's order from then on.
func (b *Backend) catalogFirst(body []byte, req *backends.Request) []byte {
	if !req.CatalogFirst || b.format.Name != masking.Hermes().Name || b.templateOrder.Load() {
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

// catalogFirstOrNot sends moved, the catalog-first body, and on a 400 that is not a
// context overflow sends in, the client's order, instead: the engine's template refused
// the layout (a body the engine refuses for another reason is refused again, with that
// answer). When the second is taken, the template's order is kept for every later
// request. Both are refused before any of the answer reaches the client, so a stream is
// retried whole.
func (b *Backend) catalogFirstOrNot(ctx context.Context, req *backends.Request, moved, in []byte) (*backends.Response, error) {
	resp, err := b.chat(ctx, req, moved)
	var e *backends.Error
	if err == nil || !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Overflow != nil {
		return resp, err
	}
	if resp, err = b.chat(ctx, req, in); err == nil {
		b.templateOrder.Store(true)
	}
	return resp, err
}
