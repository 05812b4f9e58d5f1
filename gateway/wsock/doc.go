// Package wsock is the WebSocket transport of the Responses API's WebSocket mode: it
// upgrades GET /v1/responses, reads the client's JSON messages and hands each to a
// Handler, and writes the handler's events back, one JSON object per text message,
// through one bounded queue and one writer goroutine per connection. It knows nothing
// of the Responses API's fields beyond the envelope below; the gateway's Responses door
// turns a message into the pipeline's request and writes the events through a Session
// (which satisfies door.Events).
//
// # The protocol, as researched
//
// Sources: OpenAI's guide "WebSocket Mode" (developers.openai.com/api/docs/guides/websocket-mode)
// and its reference page "WebSocket events" (developers.openai.com/api/reference/resources/responses/websocket-events);
// the generated types of async-openai (64bit/async-openai, src/types/responses/websocket.rs,
// ResponsesClientEventResponseCreate, ResponsesServerEvent, ResponseWsError); openai-node
// (src/resources/responses/ws-base.ts, src/internal/ws.ts: isRecoverableClose, SendQueue);
// Codex (openai/codex, codex-rs/codex-api/src/endpoint/responses_websocket.rs); and
// proxies' issue threads (router-for-me/CLIProxyAPI #1901, #6006; BerriAI/litellm #24959;
// openresponses/openresponses #71).
//
//   - Handshake: GET wss://…/v1/responses with Authorization: Bearer. Codex adds
//     "OpenAI-Beta: responses_websockets=2026-02-06" (an earlier value was
//     "responses_websockets=2026-02-04") and offers permessage-deflate (tungstenite's
//     DeflateConfig::default()); OpenAI's own guide connects without the beta header, and a
//     probe reported in CLIProxyAPI #6006 shows api.openai.com accepting it without. This
//     package therefore requires neither; no subprotocol is used. Codex reads optional
//     response headers (x-codex-turn-state, x-models-etag, openai-model,
//     x-reasoning-included): the gateway may set none of them.
//   - Client → server: text messages, each one JSON object {"type":"response.create", …}
//     carrying the same top-level fields as POST /v1/responses; "stream" is implicit and
//     "background" is not supported. "generate": false asks for a warm-up: no model output,
//     but a response id that later turns may chain from with previous_response_id
//     (the guide; CLIProxyAPI #6006 reports response.created … response.completed with an
//     empty output and 0 output tokens). A newer client event, "response.steer", queues
//     input into a running response (async-openai).
//   - Lanes: response.create may carry "stream_id" (WebSocket-only). Requests with the
//     same stream_id are processed FIFO, different stream_ids run in parallel on one
//     connection, and every server event of a response echoes its request's "stream_id"
//     (async-openai doc comments, from OpenAI's spec). Without stream_id a connection runs
//     its responses one at a time, in order. This package runs each lane (the unnamed lane
//     included) sequentially and different lanes concurrently, at most Options.MaxStreams
//     at once, and adds "stream_id" to every event a lane's Session sends.
//   - Server → client: the same events as the SSE stream (response.created,
//     response.in_progress, response.output_text.delta, …, response.completed /
//     response.failed / response.incomplete), one JSON object per text message, no SSE
//     framing. Codex treats a binary message as an error and ends a turn at
//     response.completed.
//   - Errors: {"type":"error","status":400,"error":{"type":"invalid_request_error",
//     "code":"…","message":"…","param":…}} plus "stream_id" on a lane and, for errors from
//     a response stream, "sequence_number" (async-openai ResponseWsError; Codex maps
//     "status" to an HTTP status and may read "headers"). Known codes include
//     previous_response_not_found and websocket_connection_limit_reached (connections are
//     limited to 60 minutes; Codex retries that one on a new connection). An error event
//     does not close the connection.
//   - Close codes: none are specified by OpenAI. openai-node reconnects (when asked to)
//     after 1001, 1005, 1006, 1011, 1012, 1013, 1015 and not after 1000, 1002, 1003, 1007,
//     1008, 1009, 1010. This package uses 1000 "idle timeout", 1001 "server shutting down",
//     1008 "slow reader", 1009 "message too big: …", 1011 "internal server error" (a
//     handler panicked), and echoes the client's code when the client closes.
//
// # Semantics chosen here
//
//   - Writing: exactly one goroutine per connection writes frames: events, pings, pongs
//     and close frames. (gorilla itself writes a close frame from the reading goroutine on
//     a wire-protocol violation or a frame over the wire backstop limit, through
//     WriteControl, which gorilla documents as safe alongside other writers.)
//   - Send queue: at most Options.SendQueue events and Options.SendQueueBytes bytes wait
//     for the writer (a single larger event is let in when the queue is empty). When the
//     queue is full, Send waits up to Options.SlowReaderWait for room — back-pressure
//     on the handler — and then cuts the client: close 1008 "slow reader", the queue is
//     dropped, Send returns ErrSlowReader. Memory per connection is therefore bounded by
//     the queue bounds plus one message in the writer.
//   - Reading: a message over Options.MaxMessageBytes (counted after decompression) closes
//     the connection with 1009 and a reason; a text message that is not a JSON object is
//     answered with an error event (code invalid_json) and the connection stays; so is a
//     binary message (code unsupported_message). Messages received but not started are
//     bounded by Options.MaxPending / MaxPendingBytes; beyond that the message is answered
//     with an error event (status 429, code too_many_pending_requests).
//   - Liveness and idleness: the server pings every PingInterval and drops a client that
//     sends nothing (not even a pong) for 2×PingInterval. Idle means no client message
//     and no handler running or queued: after IdleTimeout of that the server closes with
//     1000 "idle timeout" even if the client answers every ping; pongs prove a client is
//     alive, not that it still wants the connection.
//   - Cancellation: the context given to a Handler is cancelled when the connection starts
//     closing for any reason (client close, lost connection, slow reader, CloseAll, idle);
//     Serve returns only after every handler it started has returned and both its
//     goroutines have ended.
package wsock
