// Package ollama is the backend for Ollama's native API (/api/chat), built on the client
// in github.com/ollama/ollama/api. It translates OpenAI chat completion requests into
// Ollama chat requests and Ollama's answers back into chat.completion objects or
// chat.completion.chunk streams.
//
// # Tool choice
//
// Ollama has no tool_choice, no grammar and no logit bias; its "format" takes a JSON
// schema, which it compiles into a grammar over the whole answer. So:
//
//   - tool_choice "required", {"type":"function","function":{"name":"X"}} and
//     {"type":"allowed_tools","allowed_tools":{"mode":"required",...}} send every tool (the
//     prompt stays the same as without a constraint, so the prefix cache still hits) and a
//     format of {"name": {"enum": [allowed names]}, "arguments": ...}, where arguments is
//     the tool's parameters schema when exactly one tool is allowed and any object
//     otherwise. The model's JSON becomes one OpenAI tool call with finish_reason
//     "tool_calls", and the response says Strategy "mask". Only one call per turn can be
//     forced this way. When the template makes Ollama parse that JSON into tool_calls
//     itself, those are used instead.
//   - tool_choice "auto" or absent sends the tools and lets the model choose; Ollama cannot
//     constrain that choice, so the response says Strategy "remove": the caller must send
//     only tools the model may call. {"type":"allowed_tools", "mode":"auto"} does exactly
//     that, sending only the allowed tools.
//   - tool_choice "none" sends no tools (Strategy "remove" too). A request without tools
//     reports no strategy.
//
// Ollama converts tool parameter schemas into its own type, which keeps type,
// description, enum, items, anyOf and nested properties and drops other keywords (minimum,
// pattern, additionalProperties, ...) from what the template renders. The format schema
// is built from the client's own bytes and keeps them.
//
// # What is not translated
//
// An image part goes to a model whose POST /api/show lists the "vision" capability as its
// message's images (a base64 data: URL's bytes; images.go); for a model without it, and
// for an image by URL (the gateway fetches nothing), a note stands in the image's place
// and Notes reports it (backends.ContentNoter). Other content parts (audio, files) are
// refused with a 400, as is n > 1.
// A reasoning model's thinking is not returned. response_format maps to format
// ("json_object" to "json", "json_schema" to its schema) unless a tool call is forced.
//
// # Cached tokens
//
// Ollama reuses the KV cache for a shared prompt prefix but folds the reused tokens into
// prompt_eval_count and reports no cached count. This backend estimates it with a
// kvcache.PrefixEstimator over a canonical rendering of the tools and messages it sends
// (plus the answer, which stays in the engine's cache for the next turn, except for a
// forced call, whose raw JSON the template renders differently) and marks the response
// backends.CacheEstimated. The estimate is capped one token below the prompt, since the
// engine always evaluates at least one.
//
// # Streams
//
// Answers are read by this package's own NDJSON reader (chat.go: api.Client.Chat's
// request and errors, with a 16 KiB line buffer that grows to the 8 MB cap only for a
// line that long; the api client allocates 8 MB for every call). It calls back once per
// line; a goroutine per stream turns the lines
// into chunks and hands them to Next over an unbuffered channel, selecting on the request
// context for every send. Close cancels the request and waits for that goroutine, so a
// closed stream leaves nothing running. A stream without Ollama's "done": true ends with
// backends.ErrTruncated. A forced call's JSON is held until the model finishes and then
// sent as one call (a name chunk, then an arguments chunk).
//
// The package never writes to the client, never reads the environment itself (the api
// client, which still lists models and pings, reads OLLAMA_AUTH on each call) and never
// uses http.DefaultClient.
package ollama
