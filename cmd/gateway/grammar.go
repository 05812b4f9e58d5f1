package main

import (
	"encoding/json"

	"github.com/maskgate/maskgate/masking"
)

// hermesGrammar renders the loaded set as llama-server's grammar fields: a lazy GBNF
// grammar that only starts at <tool_call> and then allows only the allowed names.
func hermesGrammar(allowed []string, required bool) (json.RawMessage, error) {
	spec := masking.Spec{Format: masking.Hermes(), Allowed: allowed, Mode: masking.ModeAuto}
	if required {
		spec.Mode = masking.ModeRequired
	}
	g, err := masking.GBNF(spec, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}
