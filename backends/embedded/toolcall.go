//go:build llamacpp

package embedded

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maskgate/maskgate/backends/toolcall"
)

// callOpen starts a Hermes call: the text filter holds the answer back from it on.
const callOpen = "<tool_call>"

// parsedCall is one Hermes tool call: a name and its arguments as the model wrote them.
type parsedCall struct {
	name, args string
}

// parseHermesCalls parses text that starts with <tool_call>: one or more blocks
// <tool_call>{"name": ..., "arguments": ...}</tool_call>, separated by white space, read
// by backends/toolcall. The last block may lack its closing tag (the model stopped at its
// end-of-turn token). Anything else in text is an error, so that the caller passes the
// whole of it on as content.
func parseHermesCalls(text string) ([]parsedCall, error) {
	m, err := toolcall.Parse(toolcall.Hermes, text, toolcall.Options{})
	if err != nil {
		return nil, err
	}
	if rest := strings.TrimSpace(m.Content); rest != "" {
		return nil, fmt.Errorf("text besides tool calls: %.40q", rest)
	}
	if len(m.ToolCalls) == 0 {
		return nil, errors.New("no tool call")
	}
	calls := make([]parsedCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		calls[i] = parsedCall{name: c.Function.Name, args: c.Function.Arguments}
	}
	return calls, nil
}
