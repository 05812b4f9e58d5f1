package tinymodel

import "strings"

// ThinkingTemplate is ChatTemplate as a reasoning model's (Qwen3's thinking templates,
// QwQ, DeepSeek-R1) writes it: the generation prompt opens a <think> block
// ("<|im_start|>assistant\n<think>\n"), so the model's output starts inside it, unless
// enable_thinking is false (Qwen3's switch), when the block is written empty and closed;
// an assistant message's reasoning_content is rendered back inside <think></think>
// before its content. Tests give it to an engine (llama-server --chat-template-file, or
// the embedded engine's template) to see reasoning read apart from the answer.
var ThinkingTemplate = thinkingTemplate()

func thinkingTemplate() string {
	t := strings.Replace(ChatTemplate, " or (message.role == 'assistant' and not message.tool_calls) %}", " %}", 1)
	t = strings.Replace(t, "{{- '<|im_start|>assistant' }}",
		"{{- '<|im_start|>assistant' }}\n{%- if message.reasoning_content is defined and message.reasoning_content %}\n"+
			"{{- '\\n<think>\\n' + message.reasoning_content + '\\n</think>\\n' }}\n{%- endif %}", 1)
	// Every assistant message comes here now: only those with calls iterate them.
	t = strings.Replace(t, "{%- for tool_call in message.tool_calls %}", "{%- if message.tool_calls %}\n{%- for tool_call in message.tool_calls %}", 1)
	t = strings.Replace(t, "{%- endfor %}\n{{- '<|im_end|>\\n' }}", "{%- endfor %}\n{%- endif %}\n{{- '<|im_end|>\\n' }}", 1)
	return strings.Replace(t, "{{- '<|im_start|>assistant\\n' }}\n{%- endif %}",
		"{{- '<|im_start|>assistant\\n' }}\n{%- if enable_thinking is defined and not enable_thinking %}\n"+
			"{{- '<think>\\n\\n</think>\\n\\n' }}\n{%- else %}\n{{- '<think>\\n' }}\n{%- endif %}\n{%- endif %}", 1)
}
