package llamacpp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/toolcall"
	"github.com/maskgate/maskgate/masking"
)

// params is what the translation reads of a client's request.
type params struct {
	// calls says the completion text may hold tool calls to parse: the request has tools
	// and its tool_choice is not "none". Only then is a grammar asked for.
	calls bool
	// allowed are the tools the model may call and required says it must call one, as
	// tool_choice and Request.Allowed narrow them.
	allowed  []string
	required bool
	oneCall  bool // parallel_tool_calls false
	// inside says the rendered prompt opened a reasoning block (chatlayer.StartsInside):
	// the completion starts in it.
	inside   bool
	sampling sampling
}

// sampling are the /completion options mapped from the OpenAI request
// (tools/server/README.md, "POST /completion", Options). Zero values are left out so
// that llama-server's defaults apply.
type sampling struct {
	NPredict         *int     `json:"n_predict,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty"`
	TopK             *int     `json:"top_k,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	Stop             []string `json:"stop,omitempty"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
}

// clientRequest is oai.ChatRequest less the messages, which only llama-server reads, plus
// top_k, which OpenAI lacks but llama.cpp and vLLM clients send.
type clientRequest struct {
	Tools               []oai.Tool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	Temperature         *float64        `json:"temperature"`
	TopK                *int            `json:"top_k"`
	TopP                *float64        `json:"top_p"`
	Seed                *int64          `json:"seed"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	N                   *int            `json:"n"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
}

// parseRequest reads the options of body. allowed is Request.Allowed: when non-nil the
// only tools the model may call, else every tool in the request.
func parseRequest(body []byte, allowed []string) (*params, error) {
	var r clientRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, backends.BadRequest("", "request body is not a chat completion request: %v", err)
	}
	if r.N != nil && *r.N != 1 {
		return nil, backends.BadRequest("n", "llama-server backends generate one choice; leave n unset or 1")
	}
	p := &params{sampling: sampling{
		NPredict:         r.MaxTokens,
		Temperature:      r.Temperature,
		TopK:             r.TopK,
		TopP:             r.TopP,
		Seed:             r.Seed,
		PresencePenalty:  r.PresencePenalty,
		FrequencyPenalty: r.FrequencyPenalty,
	}}
	if r.MaxCompletionTokens != nil {
		p.sampling.NPredict = r.MaxCompletionTokens
	}
	stop, err := stopWords(r.Stop)
	if err != nil {
		return nil, err
	}
	p.sampling.Stop = stop
	p.oneCall = r.ParallelToolCalls != nil && !*r.ParallelToolCalls

	if len(r.Tools) == 0 {
		return p, nil
	}
	base := allowed
	if base == nil {
		base = make([]string, 0, len(r.Tools))
		for _, t := range r.Tools {
			base = append(base, t.Function.Name)
		}
	}
	return p, p.toolChoice(r.ToolChoice, base)
}

// toolChoice applies the request's tool_choice to base, the tools the model may call.
func (p *params) toolChoice(raw json.RawMessage, base []string) error {
	mode, named, none, err := masking.ParseToolChoice(raw)
	if err != nil {
		return backends.BadRequest("tool_choice", "%v", err)
	}
	if none {
		p.calls, p.allowed = false, nil
		return nil
	}
	p.calls, p.allowed, p.required = true, masking.Narrow(base, named), mode != masking.ModeAuto
	if named != nil && len(p.allowed) == 0 {
		if p.allowed = []string{}; p.required {
			return backends.BadRequest("tool_choice", "tool_choice names %v, none of which is a tool the model may call", named)
		}
	}
	return nil
}

// stopWords reads OpenAI's stop: a string, an array of strings, or null.
func stopWords(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, backends.BadRequest("stop", "stop must be a string or an array of strings")
	}
	return many, nil
}

// templateBody is the POST /apply-template body: the client's own messages and tools
// bytes, unchanged, so the rendered prompt depends on nothing the gateway decides
// (tools/server/README.md, "POST /apply-template": messages as for /v1/chat/completions;
// tools are rendered when llama-server runs with --jinja). tool_choice is left out on
// purpose: the prompt must not change when the choice does. chat_template_kwargs, when
// the client sent it, travels too, and a reasoning_effort the client sent adds the
// template variables it maps to (effortKwargs) where the client's kwargs do not set them.
//
// With catalogFirst the tools are laid out ahead of the client's system prompt where the
// format's templates allow it (catalogFirstMessages, catalogFirstKwargs); the client's
// bytes are still sent unchanged, only moved.
func templateBody(body []byte, format string, catalogFirst bool) ([]byte, error) {
	o, err := oai.ParseObject(body)
	if err != nil {
		return nil, backends.BadRequest("", "request body is not a JSON object: %v", err)
	}
	msgs, ok := o.Get("messages")
	if !ok || string(msgs) == "null" {
		return nil, backends.BadRequest("messages", "missing required parameter: 'messages'")
	}
	tools, hasTools := o.Get("tools")
	hasTools = hasTools && string(tools) != "null"
	kw, hasKw := o.Get("chat_template_kwargs")
	hasKw = hasKw && string(kw) != "null"
	switches, err := effortKwargs(o, format)
	if err != nil {
		return nil, err
	}
	if catalogFirst && hasTools && string(bytes.TrimSpace(tools)) != "[]" {
		switch format {
		case toolcall.Hermes:
			msgs = catalogFirstMessages(msgs)
		case toolcall.Llama3:
			if !hasKw {
				kw, hasKw = []byte(catalogFirstKwargs), true
			}
		}
	}
	if switches != nil {
		if !hasKw {
			kw, hasKw = switches, true
		} else if kw, err = mergeKwargs(kw, switches); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"messages":`)
	b.Write(msgs)
	if hasTools {
		b.WriteString(`,"tools":`)
		b.Write(tools)
	}
	if hasKw {
		b.WriteString(`,"chat_template_kwargs":`)
		b.Write(kw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// neutralSystem is the first message of a catalog-first Hermes prompt: an empty system
// message, after which Hermes/Qwen templates write the tools into the system turn.
const neutralSystem = oai.EmptySystem

// catalogFirstKwargs has Llama 3.x templates write the tools into the system turn ahead
// of the system prompt ("Environment: ipython", the dates, the functions, then the
// system message) instead of into the first user message after it.
const catalogFirstKwargs = `{"tools_in_user_message":false}`

// catalogFirstMessages moves a leading system message behind an empty one
// (oai.SystemBehindEmpty, which vLLM's and SGLang's backends use too). Hermes/Qwen
// templates render messages[0]'s content and then the tools in the system turn, and a
// later system message as a turn of its own, so the prompt becomes the catalog first
// and the client's system text after it: sessions whose system prompts differ share
// every token of the catalog. The client's message travels as its own bytes. Messages
// that do not begin with a non-empty system message are returned as they are.
func catalogFirstMessages(msgs []byte) []byte {
	out, _ := oai.SystemBehindEmpty(msgs)
	return out
}

// completionRequest is the POST /completion body this package writes; the grammar
// members follow it. Field order is fixed, so equal requests give equal bytes.
type completionRequest struct {
	Prompt      string `json:"prompt"`
	CachePrompt bool   `json:"cache_prompt"`
	sampling
	Stream bool `json:"stream"`
}

// completionBody builds the /completion body: the rendered prompt, cache_prompt (reuse
// the KV cache for the common prefix; tools/server/README.md, "POST /completion"), the
// sampling options, stream, and then the members of grammar, a JSON object, in its order.
func completionBody(prompt string, p *params, stream bool, grammar json.RawMessage) ([]byte, error) {
	// Without HTML escaping, so the prompt's special tokens read as the template wrote them.
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(completionRequest{Prompt: prompt, CachePrompt: true, sampling: p.sampling, Stream: stream}); err != nil {
		return nil, fmt.Errorf("encode /completion body: %w", err)
	}
	body := bytes.TrimSuffix(enc.Bytes(), []byte("\n"))
	if len(bytes.TrimSpace(grammar)) == 0 {
		return body, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(grammar, &members); err != nil || members == nil {
		return nil, fmt.Errorf("grammar fields are not a JSON object: %.64q", grammar)
	}
	own, _ := oai.ParseObject(body)
	for k := range members {
		if _, dup := own.Get(k); dup {
			return nil, fmt.Errorf("grammar fields repeat %q, which the backend writes itself", k)
		}
	}
	inner := bytes.TrimSpace(grammar)
	inner = bytes.TrimSpace(inner[1 : len(inner)-1])
	if len(inner) == 0 {
		return body, nil
	}
	out := make([]byte, 0, len(body)+len(inner)+1)
	out = append(out, body[:len(body)-1]...)
	out = append(out, ',')
	out = append(out, inner...)
	return append(out, '}'), nil
}

// withEffort is req's body with Request.ReasoningEffort as its reasoning_effort, for
// the template only, where the body has none (a Messages request's thinking).
func withEffort(req *backends.Request) []byte {
	if req.ReasoningEffort == "" {
		return req.Body
	}
	if v, ok := oai.Get(req.Body, "reasoning_effort"); ok && string(v) != "null" {
		return req.Body
	}
	v, _ := json.Marshal(req.ReasoningEffort)
	body, err := oai.Set(req.Body, "reasoning_effort", v)
	if err != nil {
		return req.Body // not an object: templateBody says so
	}
	return body
}

// effortKwargs are the chat_template_kwargs members the request's reasoning_effort maps
// to (chatlayer.Effort): nil when it has none, so that the prompt renders as before.
func effortKwargs(o *oai.Object, format string) ([]byte, error) {
	raw, ok := o.Get("reasoning_effort")
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var effort string
	if err := json.Unmarshal(raw, &effort); err != nil {
		return nil, backends.BadRequest("reasoning_effort", "reasoning_effort must be a string, one of %v", chatlayer.Efforts)
	}
	kw, err := chatlayer.Effort(effort, format == toolcall.Harmony)
	if err != nil {
		return nil, backends.BadRequest("reasoning_effort", "%v", err)
	}
	return kw, nil
}

// mergeKwargs adds to the client's chat_template_kwargs the members of add it does not
// set itself; the client's bytes stay as they are.
func mergeKwargs(kw, add []byte) ([]byte, error) {
	if _, err := oai.ParseObject(kw); err != nil {
		return nil, backends.BadRequest("chat_template_kwargs", "chat_template_kwargs must be an object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(add, &members); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := kw
	for _, k := range keys {
		if _, has := oai.Get(out, k); has {
			continue
		}
		var err error
		if out, err = oai.Set(out, k, members[k]); err != nil {
			return nil, backends.BadRequest("chat_template_kwargs", "chat_template_kwargs: %v", err)
		}
	}
	return out, nil
}
