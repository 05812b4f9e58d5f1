// Package door is the contract between the gateway's one pipeline and the API surfaces
// ("doors") it serves: Chat Completions, Responses, Messages, and Responses over a
// WebSocket. A door translates its request into the Chat Completions request the
// pipeline runs, and turns the pipeline's output back into its own wire format through
// a Sink. The pipeline never writes a door's format itself.
package door

import "github.com/maskgate/maskgate/backends/oai"

// Head is what a sink is told when the answer begins.
type Head struct {
	// Model is the model the client asked for.
	Model string
	// Created is the answer's creation time, Unix seconds.
	Created int64
}

// Sink receives one answer. The pipeline calls Begin once, before any other output: at
// the first thing it has for the client (so a failure before it still gets a clean
// error envelope, written by the door with its status), or, for a stream of a door
// whose opening events need nothing from the model (Responses, Messages), as soon as
// the request is admitted (then every later failure goes through Fail); then Reasoning and Text as they
// arrive (possibly many times, interleaved), ToolCall once per call the client must
// run, whole and in order, after all text; then End, or Fail once output has begun. A
// sink that is not streaming collects everything and writes one object at End.
//
// An error returned by a Sink method means the client is gone: the pipeline stops.
type Sink interface {
	Begin(Head) error
	Reasoning(delta string) error
	Text(delta string) error
	ToolCall(c oai.ToolCall) error
	// End closes the answer. finish is a Chat Completions finish reason
	// (oai.FinishStop, oai.FinishLength, oai.FinishToolCalls, or what the backend said);
	// usage is the whole request's, summed over the gateway's internal rounds, nil when
	// the backend reported none.
	End(finish string, usage *oai.Usage) error
	// Fail ends a begun answer with an error, in the door's in-stream error shape.
	Fail(e Error)
}

// Error is a failure as every door reports it; each door writes it in its own envelope.
type Error struct {
	Status  int    // the HTTP status it would have had before output began
	Type    string // OpenAI error type: invalid_request_error, upstream_error, ...
	Code    string // machine-readable code, may be empty
	Param   string // the request field at fault, may be empty
	Message string
	// Overflow is set when the request did not fit the model's context window (Code is
	// oai.CodeContextLength); a door whose API words that its own way (Anthropic's
	// "prompt is too long: N tokens > M maximum") writes it from these sizes.
	Overflow *oai.Overflow
}

// Events is where a streaming sink writes: server-sent events over HTTP, or one
// WebSocket message per event. name is the SSE event name ("" for none); data is one
// JSON object. An error means the client is gone.
type Events interface {
	Event(name string, data []byte) error
}

// Error makes e an error, so a door's decoder can return it as one.
func (e *Error) Error() string {
	if e.Param != "" {
		return e.Param + ": " + e.Message
	}
	return e.Message
}
