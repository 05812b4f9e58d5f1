package gateway_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// callName finds a called name in text; a call cut off by max_tokens inside its name
// leaves it unclosed.
var callName = regexp.MustCompile(`"name"\s*:\s*"([^"]*)("?)`)

// namesInText returns the names of the calls written in text (an answer whose call could
// not be parsed, e.g. cut off by max_tokens), an unclosed one with a trailing "…".
func namesInText(text string) []string {
	var out []string
	for _, sub := range callName.FindAllStringSubmatch(text, -1) {
		if sub[2] == "" {
			sub[1] += "…"
		}
		out = append(out, sub[1])
	}
	return out
}

// allowedCall reports whether n is an allowed name or, cut off ("…"), the start of one.
func allowedCall(allowed []string, n string) bool {
	if cut, ok := strings.CutSuffix(n, "…"); ok {
		for _, a := range allowed {
			if strings.HasPrefix(a, cut) {
				return true
			}
		}
		return false
	}
	return slices.Contains(allowed, n)
}

// engineAnswer is what a backend's whole answer says: the names it called (tool calls,
// or calls left as text) and its prompt and cached tokens.
type engineAnswer struct {
	called         []string
	prompt, cached int
	body           string
}

func readAnswer(body []byte) (engineAnswer, error) {
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		return engineAnswer{}, fmt.Errorf("unreadable answer %.200s: %v", body, err)
	}
	a := engineAnswer{prompt: c.Usage.PromptTokens, cached: c.Usage.PromptTokensDetails.CachedTokens, body: string(body)}
	m := c.Choices[0].Message
	for _, tc := range m.ToolCalls {
		a.called = append(a.called, tc.Function.Name)
	}
	if m.Content != nil {
		a.called = append(a.called, namesInText(*m.Content)...)
	}
	return a, nil
}

// seedGroup is the loaded set and thread of a seed in the 100-seed runs: the set changes
// every 10 seeds, 1–3 tools among bigCatalog's prefix-sharing misc_tool_NN names.
func seedGroup(prefix string, seed int) (loaded []string, thread string) {
	group := seed / 10
	loaded = []string{fmt.Sprintf("misc_tool_%02d", group), fmt.Sprintf("misc_tool_%02d", group+10)}[:1+group%2]
	if group%3 == 2 {
		loaded = append(loaded, "slack_send_message")
	}
	return loaded, fmt.Sprintf("%s-%d", prefix, group)
}

// forcedAmong is a request body forcing a call among names (allowed_tools, required).
func forcedAmong(model string, names []string, maxTokens, seed int) string {
	choice := make([]string, len(names))
	for i, n := range names {
		choice[i] = fmt.Sprintf(`{"type":"function","function":{"name":%q}}`, n)
	}
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"system","content":"You are an agent with tools."},{"role":"user","content":"do it"}],`+
		`"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[%s]}},"max_tokens":%d,"seed":%d,"temperature":1.0}`,
		model, strings.Join(choice, ","), maxTokens, seed)
}
