package chatlayer

import (
	"fmt"
	"strconv"
)

// Efforts are the reasoning_effort values OpenAI's APIs accept, from none to most.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// Effort returns the chat_template_kwargs members (a JSON object) that carry the client's
// reasoning switch effort (one of Efforts) to a chat template whose tool-call format is
// harmony or not:
//
//   - gpt-oss (harmony) reads reasoning_effort, one of low, medium and high, into its
//     system message ("Reasoning: high"); it cannot turn reasoning off, so none and
//     minimal are low, and xhigh is high;
//   - other templates that think (Qwen3) read enable_thinking: false for none, true for
//     the rest; a template that reads neither renders as before.
//
// An empty effort is no switch: nil, and the prompt renders as it would without one.
// Another value is an error naming the accepted ones.
func Effort(effort string, harmony bool) ([]byte, error) {
	if effort == "" {
		return nil, nil
	}
	known := false
	for _, e := range Efforts {
		known = known || e == effort
	}
	if !known {
		return nil, fmt.Errorf("reasoning_effort %q is not one of %v", effort, Efforts)
	}
	if harmony {
		level := effort
		switch effort {
		case "none", "minimal":
			level = "low"
		case "xhigh":
			level = "high"
		}
		return []byte(`{"reasoning_effort":` + strconv.Quote(level) + `}`), nil
	}
	return []byte(`{"enable_thinking":` + strconv.FormatBool(effort != "none") + `}`), nil
}
