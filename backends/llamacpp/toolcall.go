package llamacpp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// Tool calls are read out of the completion text by backends/toolcall in the wire format
// of Options.Format; this file holds what llama-server needs for that.

// newParser is the tool-call parser of one response. Its call ids derive from the
// response id (toolcall.CallID).
func newParser(m meta) *toolcall.Parser {
	p, err := toolcall.NewParser(m.format, toolcall.Options{ResponseID: m.id})
	if err != nil { // New checked the format
		panic(err)
	}
	return p
}

// withPreservedTokens adds the format's markers to the body's preserved_tokens, keeping
// those the grammar members already listed and their order. llama-server leaves special
// tokens out of the text it returns unless a request preserves them (llama.cpp's
// tools/server/README.md, "POST /completion"), and a marker that is not a single
// token in the loaded model is ignored there. The body is unchanged when the grammar
// already preserves every marker.
func withPreservedTokens(body []byte, markers []string) ([]byte, error) {
	if len(markers) == 0 {
		return body, nil
	}
	var have []string
	if raw, ok := oai.Get(body, "preserved_tokens"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &have); err != nil {
			return nil, fmt.Errorf("grammar fields: preserved_tokens is not an array of strings: %.64q", raw)
		}
	}
	list := have
	for _, m := range markers {
		found := false
		for _, h := range have {
			found = found || h == m
		}
		if !found {
			list = append(list, m)
		}
	}
	if len(list) == len(have) {
		return body, nil
	}
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false) // the markers are <|…|> tokens: keep them readable
	if err := e.Encode(list); err != nil {
		return nil, err
	}
	return oai.Set(body, "preserved_tokens", bytes.TrimSuffix(enc.Bytes(), []byte("\n")))
}
