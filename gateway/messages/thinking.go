package messages

import "encoding/json"

// ReasoningEffort is the reasoning switch Request.Thinking asks for, in Chat
// Completions' reasoning_effort values, for a backend that maps it onto its engine's
// chat template (backends.Request.ReasoningEffort): disabled is "none"; enabled is
// "low", "medium" or "high" by its budget_tokens, as LiteLLM maps those efforts the
// other way (1,024, 2,048 and 4,096 tokens: under 2,048 low, under 4,096 medium, else
// high); adaptive, or no thinking at all, is "" (no switch: the template's default).
// The budget itself is not a cap an engine holds the reasoning to.
func (r *Request) ReasoningEffort() string {
	if len(r.Thinking) == 0 {
		return ""
	}
	var th struct {
		Type   string   `json:"type"`
		Budget *float64 `json:"budget_tokens"`
	}
	if json.Unmarshal(r.Thinking, &th) != nil {
		return ""
	}
	switch th.Type {
	case "disabled":
		return "none"
	case "enabled":
		switch {
		case th.Budget == nil || *th.Budget >= 4096:
			return "high"
		case *th.Budget >= 2048:
			return "medium"
		default:
			return "low"
		}
	}
	return ""
}
