package vllm

import (
	"encoding/json"

	"github.com/maskgate/maskgate/backends/oai"
)

// continueFinal marks a body whose conversation ends with an assistant message that has
// text and no calls (Anthropic's prefill, a client's started answer) as vLLM continues
// one: continue_final_message true and add_generation_prompt false, so the template
// leaves that turn open and the answer carries on from its text rather than opening a
// new turn after it. A body that sets either member itself is left as it is.
func continueFinal(body []byte) ([]byte, error) {
	obj, err := oai.ParseObject(body)
	if err != nil {
		return body, nil // the engine answers it
	}
	if _, ok := obj.Get("continue_final_message"); ok {
		return body, nil
	}
	if _, ok := obj.Get("add_generation_prompt"); ok {
		return body, nil
	}
	raw, ok := obj.Get("messages")
	if !ok {
		return body, nil
	}
	var msgs []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal(raw, &msgs) != nil || len(msgs) == 0 {
		return body, nil
	}
	last := msgs[len(msgs)-1]
	if last.Role != "assistant" || (len(last.ToolCalls) > 0 && string(last.ToolCalls) != "null" && string(last.ToolCalls) != "[]") {
		return body, nil
	}
	if c := string(last.Content); c == "" || c == "null" || c == `""` || c == "[]" {
		return body, nil
	}
	body = obj.Set("continue_final_message", []byte("true"))
	return oai.Set(body, "add_generation_prompt", []byte("false"))
}
