package oai

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// CodeContextLength is OpenAI's error code for a request that does not fit the model's
// context window: the one agents (Codex among them) read to compact their history.
const CodeContextLength = "context_length_exceeded"

// Overflow is what a refusal of a request too long for the model's context window says
// of it, in tokens; zero is unknown. Completion is set only when the answer's room
// (max_tokens) is what did not fit: the prompt alone would have.
type Overflow struct {
	Prompt     int
	Completion int
	Window     int
}

// overflowForms are the engines' own wordings, most specific first. Each names which
// submatch is which: p prompt, c completion, w window, t the total asked (prompt plus
// completion), x a number the wording repeats.
var overflowForms = []struct {
	re    *regexp.Regexp
	order string
}{
	// llama-server (tools/server: exceed_context_size_error; Ollama relays it too).
	{regexp.MustCompile(`request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`), "pw"},
	// vLLM, max_tokens past what is left.
	{regexp.MustCompile(`'max_tokens' or 'max_completion_tokens' is too large: (\d+)\. This model's maximum context length is (\d+) tokens and your request has (\d+) input tokens`), "cwp"},
	// vLLM, before its V1 engine.
	{regexp.MustCompile(`maximum context length is (\d+) tokens\. However, you requested (\d+) tokens \((\d+) in the messages, (\d+) in the completion\)`), "wtpc"},
	// vLLM V1.
	{regexp.MustCompile(`maximum context length is (\d+) tokens\. However, your request has (\d+) input tokens`), "wp"},
	// SGLang.
	{regexp.MustCompile(`The input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)`), "pw"},
	{regexp.MustCompile(`maximum context length of (\d+) tokens\. You requested a total of (\d+) tokens: (\d+) tokens from the input messages and (\d+) tokens for the completion`), "wtpc"},
	// Anthropic.
	{regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`), "pw"},
	// OpenAI itself, and any server that copies its wording.
	{regexp.MustCompile(`maximum context length is (\d+) tokens`), "w"},
}

// overflowPhrases mark an overflow whose numbers the wording does not give.
var overflowPhrases = []string{
	"exceeds the available context size",      // llama-server before it named the sizes
	"input length exceeds the context length", // Ollama
	"prompt is too long",                      // Anthropic
	CodeContextLength,
}

// ParseOverflow reads an upstream's error as a context-window overflow: msg is its
// message, body (may be nil) its whole error body, whose type and n_prompt_tokens/n_ctx
// members llama-server sets. ok is false for any other error.
func ParseOverflow(msg string, body []byte) (o Overflow, ok bool) {
	for _, f := range overflowForms {
		m := f.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		total := 0
		for i, role := range f.order {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				n = 0 // a number past int: unknown
			}
			switch role {
			case 'p':
				o.Prompt = n
			case 'c':
				o.Completion = n
			case 'w':
				o.Window = n
			case 't':
				total = n
			}
		}
		if o.Prompt == 0 && total > o.Completion && o.Completion > 0 {
			o.Prompt = total - o.Completion
		}
		if o.Window > 0 && o.Prompt >= o.Window {
			o.Completion = 0 // the prompt alone did not fit
		}
		return o, true
	}
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Code    any    `json:"code"`
			NPrompt int    `json:"n_prompt_tokens"`
			NCtx    int    `json:"n_ctx"`
		} `json:"error"`
	}
	if len(body) > 0 && json.Unmarshal(body, &e) == nil && (e.Error.Type == "exceed_context_size_error" || e.Error.Code == CodeContextLength) {
		o.Prompt, o.Window = max(e.Error.NPrompt, 0), max(e.Error.NCtx, 0)
		return o, true
	}
	lower := strings.ToLower(msg)
	for _, p := range overflowPhrases {
		if strings.Contains(lower, p) {
			return o, true
		}
	}
	return o, false
}
