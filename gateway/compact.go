package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/responses"
	"github.com/maskgate/maskgate/gateway/respstore"
)

// compact is POST /v1/responses/compact, OpenAI's compaction of a Responses
// conversation (Codex's remote compaction): the request's input, with the compaction
// instruction appended as the last user message, runs as one ordinary response through
// the Responses door and the pipeline (same routing, limits, strategy and engine; the
// conversation's prompt is the one its turns built, so the engine's prefix cache
// serves it), and its text becomes the summary. The answer is {"id","object":
// "response.compaction","created_at","output","usage"}: the input's user messages as
// sent, then one compaction item whose encrypted_content carries the summary in the
// gateway's own format (responses.EncodeCompaction), which a later request's input
// turns back into the summary.
func (a *responsesAPI) compact(w http.ResponseWriter, r *http.Request) {
	body, held, err := a.host.read(w, r)
	if err != nil {
		writeError(w, a.host.log, err)
		return
	}
	run, users, aerr := compactionRun(body)
	a.host.release(held)
	if aerr != nil {
		writeError(w, a.host.log, aerr)
		return
	}
	inner := r.Clone(r.Context())
	inner.Body, inner.ContentLength = io.NopCloser(bytes.NewReader(run)), int64(len(run))
	rec := &captured{header: http.Header{}, status: http.StatusOK}
	a.host.serve(rec, inner, &responsesDoor{api: a})
	if rec.status != http.StatusOK {
		// The run's error, in OpenAI's envelope already.
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
		return
	}
	var resp struct {
		CreatedAt int64           `json:"created_at"`
		Usage     json.RawMessage `json:"usage"`
		Output    []struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &resp); err != nil {
		writeError(w, a.host.log, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "compaction_failed",
			Message: "the compaction run's answer could not be read", Err: err})
		return
	}
	var summary bytes.Buffer
	for _, it := range resp.Output {
		for _, c := range it.Content {
			if it.Type == "message" && c.Type == "output_text" {
				summary.WriteString(c.Text)
			}
		}
	}
	if len(bytes.TrimSpace(summary.Bytes())) == 0 {
		writeError(w, a.host.log, &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "compaction_failed",
			Message: "the model wrote no summary when asked to compact the conversation; retry, or compact on the client"})
		return
	}
	id := "cmp_" + randomID()
	out := make([]byte, 0, 256+summary.Len()*2)
	out = append(out, `{"id":`...)
	out = oai.AppendString(out, id)
	out = append(out, `,"object":"response.compaction","created_at":`...)
	out = strconv.AppendInt(out, resp.CreatedAt, 10)
	out = append(out, `,"output":[`...)
	for _, u := range users {
		out = append(append(out, responses.CompactionUserItem(u, "msg_"+randomID())...), ',')
	}
	out = append(out, `{"type":"compaction","id":`...)
	out = oai.AppendString(out, id)
	out = append(out, `,"encrypted_content":`...)
	out = oai.AppendString(out, responses.EncodeCompaction(summary.String()))
	out = append(out, `}]`...)
	if len(resp.Usage) > 0 {
		out = append(append(out, `,"usage":`...), resp.Usage...)
	}
	out = append(out, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// compactionRun is the Responses request that runs a compaction: the client's body with
// the compaction instruction appended to its input, store and stream off and no tool
// calls (tools stay, as bytes of the prompt), and the input's user messages (copies).
func compactionRun(body []byte) ([]byte, []json.RawMessage, error) {
	o, err := oai.ParseObject(body)
	if err != nil {
		return nil, nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json",
			Message: "The request body is not a valid JSON object."}
	}
	input, _ := o.Get("input")
	var items []json.RawMessage
	switch {
	case len(input) == 0 || string(input) == "null":
	case input[0] == '"':
		items = []json.RawMessage{append(append([]byte(`{"type":"message","role":"user","content":`), input...), '}')}
	case input[0] == '[':
		if err := json.Unmarshal(input, &items); err != nil {
			return nil, nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "input", Code: "invalid_type",
				Message: "Invalid 'input': expected a string or an array of input items."}
		}
	default:
		return nil, nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "input", Code: "invalid_type",
			Message: "Invalid 'input': expected a string or an array of input items."}
	}
	var users []json.RawMessage
	runInput := make([]byte, 0, len(input)+len(responses.CompactionPrompt)+64)
	runInput = append(runInput, '[')
	for _, it := range items {
		var head struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		_ = json.Unmarshal(it, &head)
		if head.Role == "user" && (head.Type == "" || head.Type == "message") {
			users = append(users, append(json.RawMessage(nil), it...))
		}
		runInput = append(append(runInput, it...), ',')
	}
	runInput = append(runInput, `{"type":"message","role":"user","content":`...)
	runInput = oai.AppendString(runInput, responses.CompactionPrompt)
	runInput = append(runInput, "}]"...)
	run := body
	for _, e := range []struct {
		key   string
		value []byte
	}{{"input", runInput}, {"store", []byte("false")}, {"stream", []byte("false")}} {
		if run, err = oai.Set(run, e.key, e.value); err != nil {
			return nil, nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json", Message: "The request body is not a valid JSON object."}
		}
	}
	if tools, ok := o.Get("tools"); ok && string(tools) != "null" && string(tools) != "[]" {
		if run, err = oai.Set(run, "tool_choice", []byte(`"none"`)); err != nil {
			return nil, nil, err
		}
	}
	return run, users, nil
}

// captured is the ResponseWriter a compaction's run answers into: the whole answer in
// memory (a non-streamed response, bounded by the run's output).
type captured struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (c *captured) Header() http.Header { return c.header }

func (c *captured) WriteHeader(status int) {
	if !c.wrote {
		c.status, c.wrote = status, true
	}
}

func (c *captured) Write(b []byte) (int, error) {
	c.wrote = true
	return c.body.Write(b)
}

func (c *captured) Flush() {}

// inputTokens is POST /v1/responses/input_tokens: the prompt a Responses body
// would make, counted as count_tokens counts a Messages body (Server.promptTokens:
// tiktoken over the chat JSON, or the profile's token counter for tools), with the
// history of previous_response_id put first as a response would. The answer is OpenAI's
// {"object":"response.input_tokens","input_tokens":N}.
func (a *responsesAPI) inputTokens(w http.ResponseWriter, r *http.Request) {
	body, held, err := a.host.read(w, r)
	if err != nil {
		writeError(w, a.host.log, err)
		return
	}
	defer a.host.release(held)
	var storeErr error
	rq, derr := responses.Decode(body, responses.Options{Hosted: a.host.hosted,
		Reference: a.references(r.Context(), callerOf(r.Context()).name(), nil, &storeErr)})
	if storeErr != nil {
		writeError(w, a.host.log, respstore.Unavailable(storeErr))
		return
	}
	if derr != nil {
		writeError(w, a.host.log, derr)
		return
	}
	if _, ok := a.host.router.lookup(rq.Model); !ok {
		writeError(w, a.host.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: "The model '" + rq.Model + "' is not served by this gateway."})
		return
	}
	var history []json.RawMessage
	if id := rq.PreviousResponseID; id != "" {
		prev, err := a.store.Keeper().Load(r.Context(), callerOf(r.Context()).name(), id)
		switch {
		case err != nil:
			writeError(w, a.host.log, respstore.Unavailable(err))
			return
		case prev == nil:
			writeError(w, a.host.log, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "previous_response_id",
				Code: "previous_response_not_found", Message: "Previous response with id '" + id + "' not found."})
			return
		}
		history = prev.History()
	}
	env, err := oai.ParseEnvelope(rq.ChatBody(history))
	if err != nil {
		writeError(w, a.host.log, err)
		return
	}
	msgs := make([][]byte, len(env.Messages))
	for i, m := range env.Messages {
		msgs[i] = m
	}
	tools, _ := env.Object.Get("tools")
	out := strconv.AppendInt([]byte(`{"object":"response.input_tokens","input_tokens":`), int64(a.host.count(tools, msgs)), 10)
	out = append(out, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}
