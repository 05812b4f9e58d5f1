package responses

import (
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// End completes the response: response.completed, or response.incomplete when the
// answer was cut at the token limit (finish "length") or filtered. A completed turn
// with no text and no call gets an empty assistant message (not when WarmUp). The
// response has a usage object, zeros when usage is nil.
func (w *Writer) End(finish string, usage *oai.Usage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status != "" {
		return nil
	}
	if err := w.begin(); err != nil {
		return err
	}
	status := "completed"
	switch finish {
	case oai.FinishLength:
		status, w.incomplete = "incomplete", "max_output_tokens"
	case "content_filter":
		status, w.incomplete = "incomplete", "content_filter"
	}
	if err := w.closeOpen(status); err != nil {
		return err
	}
	if status == "completed" && !w.WarmUp && !w.answered() {
		// A turn with no text and no call still answers, as OpenAI's does: one
		// assistant message, its text "". A client that takes the last message as the
		// turn's final output (the OpenAI Agents SDK) would otherwise call again.
		if err := w.openItem("message"); err != nil {
			return err
		}
		if err := w.closeOpen(status); err != nil {
			return err
		}
	}
	if usage == nil {
		usage = &oai.Usage{} // every ended response has a usage object: zeros where the engine told none
	}
	w.status, w.usage = status, usage
	if status == "completed" {
		w.completedAt = w.Now().Unix()
	}
	resp := w.response(status)
	w.body = resp // streamed too: a stored response is read back whole
	if w.Completed != nil {
		w.Completed() // before the client can see the end and send the next turn
	}
	if !w.stream {
		return nil
	}
	return w.emit("response."+status, func(o *obj) { o.raw("response", resp) })
}

// answered reports whether the output holds a message or a call: anything but
// reasoning.
func (w *Writer) answered() bool {
	for _, it := range w.items {
		if it.kind != "reasoning" {
			return true
		}
	}
	return false
}

// Fail ends a begun response with e: an "error" event, then response.failed carrying
// the response with its error. An open text item stays as it was, "incomplete". Not
// streaming, Body is the failed response (the door answers e with ErrorBody instead).
func (w *Writer) Fail(e door.Error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status != "" {
		return
	}
	_ = w.begin()
	if it := w.open; it != nil {
		w.open = nil
		it.final = w.itemJSON(it, "incomplete")
	}
	w.status, w.failure = "failed", &e
	resp := w.response("failed")
	if !w.stream {
		w.body = resp
		return
	}
	_ = w.emit("error", func(o *obj) { errorFields(o, e) })
	_ = w.emit("response.failed", func(o *obj) { o.raw("response", resp) })
}

// ErrorEvent is the data of the stream's error event for e, numbered seq: what Fail
// sends, for a stream the gateway relays rather than writes (its own events numbered
// up to seq-1).
func ErrorEvent(e door.Error, seq int64) []byte {
	o := newObj(256).str("type", "error").num("sequence_number", seq)
	errorFields(o, e)
	return o.done()
}

func errorFields(o *obj, e door.Error) {
	code := e.Code
	if code == "" {
		code = responseErrorCode(e)
	}
	o.str("code", code).str("message", e.Message)
	if e.Param != "" {
		o.str("param", e.Param)
	} else {
		o.raw("param", []byte("null"))
	}
}

// responseErrorCodes are the codes a response's error may carry.
var responseErrorCodes = map[string]bool{
	"server_error": true, "rate_limit_exceeded": true, "invalid_prompt": true, "vector_store_timeout": true,
	"invalid_image": true, "invalid_image_format": true, "invalid_base64_image": true, "invalid_image_url": true,
	"image_too_large": true, "image_too_small": true, "image_parse_error": true,
	"image_content_policy_violation": true, "invalid_image_mode": true, "image_file_too_large": true,
	"unsupported_image_media_type": true, "empty_image_file": true, "failed_to_download_image": true,
	"image_file_not_found": true,
	// Not in the API reference's list, but what Codex reads in response.failed to
	// compact its history (codex-rs: classify_provider_error), as it does in the
	// envelope of an HTTP error.
	oai.CodeContextLength: true,
}

// responseErrorCode is the response error code for e: its own when it is one of them,
// else rate_limit_exceeded for a 429, invalid_prompt for another client error,
// server_error for the rest.
func responseErrorCode(e door.Error) string {
	switch {
	case responseErrorCodes[e.Code]:
		return e.Code
	case e.Status == 429 || e.Type == "rate_limit_error":
		return "rate_limit_exceeded"
	case e.Type == "invalid_request_error" || (e.Status >= 400 && e.Status < 500):
		return "invalid_prompt"
	}
	return "server_error"
}

// response is the response object in its present state.
func (w *Writer) response(status string) []byte {
	f := w.r.src
	items := make([][]byte, 0, len(w.items))
	if status != "in_progress" {
		for _, it := range w.Output() {
			items = append(items, it)
		}
	} else {
		// The output so far (none at Begin): a keep-alive's response.in_progress carries
		// it as a client's accumulated snapshot has it.
		for _, it := range w.items {
			items = append(items, w.snapshotItem(it))
		}
	}
	out := array(items)
	o := newObj(len(out)+1024).str("id", w.id).str("object", "response").num("created_at", w.created).
		str("status", status).raw("background", []byte("false"))
	if w.completedAt != 0 {
		o.num("completed_at", w.completedAt)
	} else {
		o.raw("completed_at", []byte("null"))
	}
	if e := w.failure; e != nil {
		o.raw("error", newObj(len(e.Message)+64).str("code", responseErrorCode(*e)).str("message", e.Message).done())
	} else {
		o.raw("error", []byte("null"))
	}
	if w.incomplete != "" {
		o.raw("incomplete_details", newObj(48).str("reason", w.incomplete).done())
	} else {
		o.raw("incomplete_details", []byte("null"))
	}
	o.rawOr("instructions", f.get("instructions"), "null").
		rawOr("max_output_tokens", f.get("max_output_tokens"), "null").
		rawOr("max_tool_calls", f.get("max_tool_calls"), "null").
		str("model", w.model).
		raw("output", out).
		rawOr("parallel_tool_calls", f.get("parallel_tool_calls"), "true").
		rawOr("previous_response_id", f.get("previous_response_id"), "null").
		rawOr("prompt_cache_key", f.get("prompt_cache_key"), "null").
		rawOr("reasoning", f.get("reasoning"), `{"effort":null,"summary":null}`).
		rawOr("safety_identifier", f.get("safety_identifier"), "null").
		raw("store", []byte(strconv.FormatBool(w.r.Store))).
		rawOr("temperature", f.get("temperature"), "1").
		rawOr("text", f.get("text"), `{"format":{"type":"text"}}`).
		rawOr("tool_choice", f.get("tool_choice"), `"auto"`).
		raw("tools", echoTools(f.get("tools"))).
		rawOr("top_logprobs", f.get("top_logprobs"), "0").
		rawOr("top_p", f.get("top_p"), "1").
		rawOr("presence_penalty", f.get("presence_penalty"), "0").
		rawOr("frequency_penalty", f.get("frequency_penalty"), "0").
		str("service_tier", "default").
		rawOr("truncation", f.get("truncation"), `"disabled"`)
	if u := w.usage; u != nil {
		cached, reasoning := 0, 0
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		if u.CompletionTokensDetails != nil {
			reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
		o.raw("usage", newObj(160).num("input_tokens", int64(u.PromptTokens)).
			raw("input_tokens_details", newObj(24).num("cached_tokens", int64(cached)).done()).
			num("output_tokens", int64(u.CompletionTokens)).
			raw("output_tokens_details", newObj(28).num("reasoning_tokens", int64(reasoning)).done()).
			num("total_tokens", int64(u.TotalTokens)).done())
	} else {
		o.raw("usage", []byte("null"))
	}
	o.rawOr("user", f.get("user"), "null").
		rawOr("metadata", f.get("metadata"), "{}")
	if n := Notice(w.r.Dropped, w.r.Warnings); n != nil {
		o.raw("maskgate", n)
	}
	return o.done()
}

// Notice is the "maskgate" member of a response (and of a Messages message): what the
// gateway left out of the request, in the body where a client reads it, since the API
// has no warnings of its own. dropped names the hosted tools left out (the model could
// not call them), warnings what else was (a document it could not read). nil when
// nothing was: the object is then the API's alone.
//
//	{"dropped_tools":["web_search"],"warnings":["input[0].content[1]: ..."]}
func Notice(dropped, warnings []string) []byte {
	if len(dropped) == 0 && len(warnings) == 0 {
		return nil
	}
	strs := func(ss []string) []byte {
		vs := make([][]byte, len(ss))
		for i, s := range ss {
			vs[i] = quote(s)
		}
		return array(vs)
	}
	o := newObj(64)
	if len(dropped) > 0 {
		o.raw("dropped_tools", strs(dropped))
	}
	if len(warnings) > 0 {
		o.raw("warnings", strs(warnings))
	}
	return o.done()
}
