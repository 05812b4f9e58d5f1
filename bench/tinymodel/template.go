package tinymodel

import (
	"fmt"
	"strings"
)

// ChatTemplate is the Jinja chat template stored in tokenizer.chat_template,
// for engines that render prompts from the GGUF (llama-server --jinja). It
// is ChatML with Hermes/Qwen 2.5 tool calling: the tool catalog is JSON lines
// inside <tools></tools> in the system turn, assistant calls are
// <tool_call>{"name": ..., "arguments": ...}</tool_call>, and tool results go
// back as a user turn in <tool_response> tags.
const ChatTemplate = `{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}
{{- messages[0].content + '\n\n' }}
{%- endif %}
{{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
{%- for tool in tools %}
{{- '\n' }}{{- tool | tojson }}
{%- endfor %}
{{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) or (message.role == 'assistant' and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}
{{- '\n' + message.content }}
{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}
{%- set tool_call = tool_call.function %}
{%- endif %}
{{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}
{{- tool_call.arguments }}
{%- else %}
{{- tool_call.arguments | tojson }}
{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
{{- '<|im_start|>user' }}
{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
{{- '<|im_end|>\n' }}
{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- endif %}
`

// OllamaTemplate renders the same prompt as ChatTemplate in Ollama's Go
// template language (variables in Ollama's docs/template.mdx). Ollama takes
// the tool-call tag it parses replies for from the first text inside
// "if .ToolCalls" (tools/template.go), so "<tool_call>" must stay first there.
// Each call gets its own <tool_call> block, as in ChatTemplate.
// Go templates have no arithmetic, so grouping consecutive tool results into
// one user turn remembers the previous role and peeks at the rest of the
// list instead of indexing i-1 and i+1.
const OllamaTemplate = `{{- if or .System .Tools }}<|im_start|>system
{{ if .System }}{{ .System }}
{{- if .Tools }}

{{ end }}
{{- end }}
{{- if .Tools }}# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{{- range .Tools }}
{{ json . }}
{{- end }}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>
{{- end }}<|im_end|>
{{ end }}
{{- $prev := "" }}
{{- range $i, $_ := .Messages }}
{{- $rest := slice $.Messages $i }}
{{- $last := eq (len $rest) 1 }}
{{- if eq .Role "user" }}<|im_start|>user
{{ .Content }}<|im_end|>
{{ else if eq .Role "assistant" }}<|im_start|>assistant
{{- if .Content }}
{{ .Content }}
{{- end }}
{{- if .ToolCalls }}
{{- range .ToolCalls }}
<tool_call>
{"name": "{{ .Function.Name }}", "arguments": {{ json .Function.Arguments }}}
</tool_call>
{{- end }}
{{- end }}
{{- if not $last }}<|im_end|>
{{ end }}
{{- else if eq .Role "tool" }}
{{- if ne $prev "tool" }}<|im_start|>user{{ end }}
<tool_response>
{{ .Content }}
</tool_response>
{{- if or $last (ne (index $rest 1).Role "tool") }}<|im_end|>
{{ end }}
{{- end }}
{{- if and $last (ne .Role "assistant") }}<|im_start|>assistant
{{ end }}
{{- $prev = .Role }}
{{- end }}`

// StopSequence ends generation at the close of an assistant turn. The model
// file names <|im_end|> as EOS too; the explicit stop also covers engines
// that render it as text.
const StopSequence = TokenIMEnd

// Modelfile returns an Ollama Modelfile for the model at ggufPath.
func Modelfile(ggufPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", ggufPath)
	fmt.Fprintf(&b, "TEMPLATE \"\"\"%s\"\"\"\n", OllamaTemplate)
	fmt.Fprintf(&b, "PARAMETER stop %q\n", StopSequence)
	return b.String()
}
