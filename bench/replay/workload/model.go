package workload

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/masking"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// Model is the scripted model: what a cooperative agent model answers to a request, so
// that a run is the same on every engine, random-weight ones included. It reads only
// the request (messages and tools), as a model does:
//
//   - after the user's task, it calls the tool the task names if that tool is loaded
//     (there is no load_tool in the tools, or an earlier load_tool call named it), and
//     load_tool for it otherwise;
//   - after a load_tool result, it calls the tool;
//   - after the error for a call to a tool that is not loaded, it calls load_tool;
//   - after the client's tool result, it answers with a line of text.
//
// Strays: where the tool is in the prompt but not loaded (the whole catalog is there
// under mask, allowed_tools and validate), the model calls it directly on the first try
// for a share Stray of tasks (decided by a hash of the task, so every strategy sees the
// same strays). A constraint that the engine enforces turns such a call into load_tool,
// as a token mask that cannot spell the name would: Decide applies the request's allowed
// set (Request.Allowed) and an allowed_tools tool_choice that way. Nothing else is
// constrained, so under validate a stray reaches the gateway.
type Model struct {
	// Stray is the share of tasks, 0 to 1, whose tool the model calls before loading it
	// when it can see it.
	Stray float64
}

// Reply is the model's answer to one request.
type Reply struct {
	// Message is the assistant message, as the engine returns it.
	Message []byte
	// Finish is "tool_calls" or "stop".
	Finish string
	// Call is the name of the tool called, or "".
	Call string
	// Stray is true for a call to a tool that is not loaded: the gateway must answer it.
	Stray bool
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (m *chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	return string(m.Content)
}

var taskTool = regexp.MustCompile(`\(tool ([A-Za-z0-9_.-]+)\)`)

// Request is what the scripted model reads of a chat completion request: its messages
// array, the names of its tools in order, and its tool_choice. A caller that sees the
// same tools array on many requests (a whole catalog) reads its names once
// (ToolNames) instead of decoding the array with every request (Decide does).
type Request struct {
	// Messages is the request's messages array, raw.
	Messages json.RawMessage
	// Tools are the function names of the tools array ("" for a tool without one).
	Tools []string
	// ToolChoice is the request's tool_choice, raw; empty if none.
	ToolChoice json.RawMessage
	// Seen, when set, keeps the messages decoded by their bytes across requests: a
	// client resends every earlier message of the conversation with each request.
	Seen *Seen
}

// Seen keeps decoded messages by their bytes for DecideRequest, up to maxSeen of them
// (then it starts over). The zero value is ready; it is safe for concurrent use.
type Seen struct {
	mu   sync.Mutex
	msgs map[string]chatMessage
}

const maxSeen = 1 << 16

// decode decodes one message, from s when it holds it.
func (s *Seen) decode(b []byte) (chatMessage, error) {
	var m chatMessage
	if s == nil {
		err := json.Unmarshal(b, &m)
		return m, err
	}
	s.mu.Lock()
	m, ok := s.msgs[string(b)]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, err
	}
	s.mu.Lock()
	if s.msgs == nil || len(s.msgs) >= maxSeen {
		s.msgs = map[string]chatMessage{}
	}
	s.msgs[string(b)] = m
	s.mu.Unlock()
	return m, nil
}

// ToolNames reads the function names of a tools array, in order, as Decide reads them.
func ToolNames(tools []byte) ([]string, error) {
	var ts []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(tools, &ts); err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Function.Name)
	}
	return names, nil
}

// Decide answers a chat completion request body. allowed, when not nil, is the set the
// engine lets the model call (backends.Request.Allowed).
func (m Model) Decide(body []byte, allowed []string) (Reply, error) {
	var req struct {
		Messages   json.RawMessage `json:"messages"`
		Tools      json.RawMessage `json:"tools"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Reply{}, fmt.Errorf("scripted model: %w", err)
	}
	r := Request{Messages: req.Messages, ToolChoice: req.ToolChoice}
	if len(req.Tools) > 0 {
		var err error
		if r.Tools, err = ToolNames(req.Tools); err != nil {
			return Reply{}, err
		}
	}
	return m.DecideRequest(r, allowed)
}

// DecideRequest is Decide on a request already read.
func (m Model) DecideRequest(req Request, allowed []string) (Reply, error) {
	var msgs []chatMessage
	if len(req.Messages) > 0 && string(req.Messages) != "null" {
		if err := oai.Elements(req.Messages, func(b []byte) error {
			m, err := req.Seen.decode(b)
			msgs = append(msgs, m)
			return err
		}); err != nil {
			return Reply{}, fmt.Errorf("scripted model: messages: %w", err)
		}
	}
	if len(msgs) == 0 {
		return Reply{}, fmt.Errorf("scripted model: no messages")
	}
	user := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			user = i
			break
		}
	}
	var tool string
	if user >= 0 {
		if g := taskTool.FindStringSubmatch(msgs[user].text()); g != nil {
			tool = g[1]
		}
	}
	last := &msgs[len(msgs)-1]
	if tool == "" || last.Role == "assistant" || (last.Role == "tool" && strings.Contains(last.text(), `"ok":true`)) {
		return textReply(tool), nil
	}

	names := req.Tools
	managed := slices.Contains(names, meta.LoadTool)
	loaded := !managed
	strayed := false
	for i, msg := range msgs {
		for _, c := range msg.ToolCalls {
			switch {
			case c.Function.Name == meta.LoadTool && loadsTool(c.Function.Arguments, tool):
				loaded = true
			case c.Function.Name == tool && i > user:
				strayed = true
			}
		}
	}
	id := fmt.Sprintf("call_%d", len(msgs))
	if loaded {
		return callReply(id, tool, fmt.Sprintf(`{"ref":"task-%d"}`, user)), nil
	}
	want := meta.LoadTool
	if !strayed && slices.Contains(names, tool) && m.strays(msgs[user].text(), tool) {
		want = tool
	}
	if want == tool && !permitted(tool, allowed, req.ToolChoice) {
		want = meta.LoadTool
	}
	if want == tool {
		r := callReply(id, tool, fmt.Sprintf(`{"ref":"task-%d"}`, user))
		r.Stray = true
		return r, nil
	}
	args, _ := json.Marshal(struct {
		ToolName string `json:"toolName"`
	}{tool})
	return callReply(id, meta.LoadTool, string(args)), nil
}

// strays decides, the same way for every strategy, whether the model calls tool before
// loading it in the task opened by text.
func (m Model) strays(text, tool string) bool {
	h := fnv.New64a()
	h.Write([]byte(text))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	return float64(h.Sum64()>>11)/(1<<53) < m.Stray
}

// permitted says whether an engine that enforces allowed and an allowed_tools
// tool_choice lets the model call name.
func permitted(name string, allowed []string, toolChoice json.RawMessage) bool {
	if allowed != nil && !slices.Contains(allowed, name) {
		return false
	}
	if len(toolChoice) == 0 {
		return true
	}
	_, narrow, none, err := masking.ParseToolChoice(toolChoice)
	if err != nil {
		return true
	}
	if none {
		return false
	}
	return narrow == nil || len(masking.Narrow([]string{name}, narrow)) == 1
}

func loadsTool(arguments, tool string) bool {
	var a struct {
		ToolName  string   `json:"toolName"`
		ToolNames []string `json:"toolNames"`
	}
	if json.Unmarshal([]byte(arguments), &a) != nil {
		return false
	}
	return a.ToolName == tool || slices.Contains(a.ToolNames, tool)
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

func callReply(id, name, args string) Reply {
	b, _ := json.Marshal(struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		ToolCalls []toolCall `json:"tool_calls"`
	}{Role: "assistant", ToolCalls: []toolCall{{ID: id, Type: "function", Function: functionCall{Name: name, Arguments: args}}}})
	return Reply{Message: b, Finish: "tool_calls", Call: name}
}

func textReply(tool string) Reply {
	text := "Done."
	if tool != "" {
		text = "Done: " + tool + " finished; the result is above."
	}
	return Reply{Message: message("assistant", text), Finish: "stop"}
}
