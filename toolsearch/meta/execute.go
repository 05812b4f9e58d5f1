package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Call is a model's call to a tool.
type Call struct {
	Name string
	// Arguments is the arguments JSON exactly as the model wrote it.
	Arguments string
}

// Outcome is what a meta-tool call produced.
type Outcome struct {
	// Content is the tool message content to append after the call: compact JSON,
	// the same bytes for the same call and Env.
	Content string
	// Load are the names to add to the thread's loaded set, in order, none already
	// loaded (as far as Env.Loaded knows) and none twice.
	Load []string
	// Err says the call failed, in whole or in part; Content tells the model why.
	Err bool
	// Log is a gateway-side failure worth logging (an embeddings backend that failed,
	// leaving lexical results); never shown to the model. Nil when there is none.
	Log error
}

// Execute runs a model's call to a meta-tool. It never panics on the model's arguments:
// a bad call is an Outcome with Err set and a message that tells the model what to do.
// ctx bounds a searcher that calls out (see OptionsSearcher).
func Execute(ctx context.Context, call Call, env Env) Outcome {
	switch call.Name {
	case SearchTools:
		return searchTools(ctx, call.Arguments, &env)
	case LoadTool:
		return loadTool(ctx, call.Arguments, &env)
	}
	return failure(fmt.Sprintf("%s is not a meta-tool; call %s or %s", quote(call.Name), SearchTools, LoadTool))
}

// errorContent is the content of a call that did nothing.
type errorContent struct {
	Error string `json:"error"`
}

func failure(msg string) Outcome {
	return Outcome{Content: encode(errorContent{Error: msg}), Err: true}
}

// encode writes v as compact JSON without HTML escaping ('<' stays '<': the reader is
// a model, not a browser). v is one of this package's content types, which always encode.
func encode(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Unreachable for the types encoded here; keep the content valid JSON anyway.
		return `{"error":"internal error encoding the result"}`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// maxEcho is the most bytes of a model-supplied string that a message repeats.
const maxEcho = 128

// quote is s, cut to maxEcho bytes, in double quotes, for messages.
func quote(s string) string {
	if len(s) > maxEcho {
		s = s[:maxEcho] + "…"
	}
	return `"` + s + `"`
}

// decodeArgs parses a model's arguments: a JSON object, or that object as a JSON string
// (some models double-encode), or nothing at all (an empty object).
func decodeArgs(s string) (map[string]json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]json.RawMessage{}, nil
	}
	if s[0] == '"' {
		var inner string
		if err := json.Unmarshal([]byte(s), &inner); err == nil {
			s = strings.TrimSpace(inner)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, fmt.Errorf("arguments are not a JSON object")
	}
	return m, nil
}

// arg is the first of keys that args has.
func arg(args map[string]json.RawMessage, keys ...string) (json.RawMessage, bool) {
	for _, k := range keys {
		if v, ok := args[k]; ok && string(v) != "null" {
			return v, true
		}
	}
	return nil, false
}
