//go:build llamacpp

package embedded

import (
	"fmt"

	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/masking"
)

// callFormat is the model's tool-call wire format as the engine uses it: the mask's
// format (when a mask can express it), the parser's name, and the marker from which
// the answer is read as calls rather than sent as content.
type callFormat struct {
	mask       masking.Format
	constrains bool
	parse      string
	marker     string
}

// formatFor picks the wire format: the one named (Options.Format), else the one the
// chat template shows (masking.DetectFormat), else Hermes parsing without a mask — the
// gateway then removes unloaded tools rather than masking them.
func formatFor(name, template string) (callFormat, error) {
	f, ok := masking.Format{}, false
	if name != "" {
		if f, ok = masking.FormatByName(name); !ok {
			return callFormat{}, fmt.Errorf("unknown tool-call format %q (one of %v)", name, masking.FormatNames())
		}
	} else {
		f, ok = masking.DetectFormat(template)
	}
	if !ok {
		parse, found := toolcall.Detect(template)
		if !found {
			parse = toolcall.Hermes
		}
		return callFormat{parse: parse, marker: markerOf(parse, masking.Format{})}, nil
	}
	return callFormat{mask: f, constrains: true, parse: f.Name, marker: markerOf(f.Name, f)}, nil
}

// markerOf is where calls start in an answer. A harmony answer is channels from its
// first byte, so all of it goes to the parser (its final channel comes back as content).
func markerOf(parse string, f masking.Format) string {
	switch {
	case parse == toolcall.Harmony:
		return "<|channel|>"
	case f.Lead != "":
		return f.Lead
	case f.Trigger != "":
		return f.Trigger
	}
	if sp := toolcall.SpecialTokens(parse); len(sp) > 0 {
		return sp[0]
	}
	return "<tool_call>"
}
