//go:build llamacpp

package embedded

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maskgate/maskgate/backends/toolcall"
)

// parsedCall is one tool call: a name and its arguments as the model wrote them.
type parsedCall struct {
	name, args string
}

// parseCalls reads the answer's tail from the call marker on, in format: the calls, the
// content the format keeps outside them (harmony's final channel) and its reasoning
// (harmony's analysis channel). For other formats any text besides the calls is an
// error, so that the caller passes the whole tail on as content rather than half of it —
// unless cut: a tail the token limit cut is read as toolcall.FinishCut reads it (a call
// whose name is whole is a call, with its arguments so far), and never comes back as the
// template's text.
func parseCalls(format, text string, cut bool) (calls []parsedCall, content, reasoning string, err error) {
	m, err := toolcall.Parse(format, text, toolcall.Options{Cut: cut})
	if err != nil {
		return nil, "", "", err
	}
	if rest := strings.TrimSpace(m.Content); rest != "" {
		if format != toolcall.Harmony && !cut {
			return nil, "", "", fmt.Errorf("text besides tool calls: %.40q", rest)
		}
		content = m.Content
	}
	if len(m.ToolCalls) == 0 && content == "" && m.Reasoning == "" && !cut {
		return nil, "", "", errors.New("no tool call")
	}
	calls = make([]parsedCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		calls[i] = parsedCall{name: c.Function.Name, args: c.Function.Arguments}
	}
	return calls, content, m.Reasoning, nil
}

// parseHermesCalls is parseCalls for the Hermes format, which must hold calls only.
func parseHermesCalls(text string) ([]parsedCall, error) {
	calls, _, _, err := parseCalls(toolcall.Hermes, text, false)
	return calls, err
}
