package workload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// SessionOptions shape one scripted session. The zero value of each field is its default.
type SessionOptions struct {
	// Turns is the number of client requests. If zero, 20. A task takes two turns: the
	// user's request (answered with a tool call) and the tool's result (answered with
	// text).
	Turns int
	// MinTools and MaxTools bound how many distinct tools the session discovers. If zero,
	// 3 and 8; never more than the tasks or the catalog.
	MinTools, MaxTools int
	// Seed picks the session's tools and task order.
	Seed uint64
}

// Session is the client's side of a conversation: the task of every other turn.
type Session struct {
	Turns int
	// Tasks are the tools the tasks need, in order; a tool's first task is where it is
	// discovered.
	Tasks []ToolSpec
	// Tools are the distinct tools, in the order they are discovered.
	Tools []ToolSpec
}

// NewSession scripts a session over cat: a pure function of cat and o.
func NewSession(cat *Catalog, o SessionOptions) (*Session, error) {
	if o.Turns == 0 {
		o.Turns = 20
	}
	if o.MinTools == 0 {
		o.MinTools = 3
	}
	if o.MaxTools == 0 {
		o.MaxTools = 8
	}
	if o.Turns < 2 || o.MinTools < 1 || o.MaxTools < o.MinTools {
		return nil, fmt.Errorf("workload: session of %d turns discovering %d to %d tools; give 2 turns or more and 1 ≤ min ≤ max", o.Turns, o.MinTools, o.MaxTools)
	}
	tasks := o.Turns / 2
	rng := rand.New(rand.NewPCG(o.Seed, 0x73657373696f6e)) // "session"
	k := o.MinTools + rng.IntN(o.MaxTools-o.MinTools+1)
	k = min(k, tasks, len(cat.Specs))

	// Tools of one session cluster in a few products, as an agent's task does: pick a
	// first tool, then prefer tools of the namespaces already picked.
	perm := rng.Perm(len(cat.Specs))
	var picked []ToolSpec
	used := map[string]bool{}
	nsSeen := map[string]bool{}
	for pass := 0; pass < 2 && len(picked) < k; pass++ {
		for _, i := range perm {
			if len(picked) == k {
				break
			}
			t := cat.Specs[i]
			if used[t.Name] || (pass == 0 && len(picked) > 0 && !nsSeen[t.Namespace] && len(nsSeen) >= 2) {
				continue
			}
			used[t.Name] = true
			nsSeen[t.Namespace] = true
			picked = append(picked, t)
		}
	}

	// Tool i is first needed at task i·tasks/k, so discoveries spread over the session;
	// the tasks between reuse a tool already discovered.
	s := &Session{Turns: o.Turns, Tools: picked}
	next := 0
	for task := range tasks {
		if next < k && task >= next*tasks/k {
			s.Tasks = append(s.Tasks, picked[next])
			next++
			continue
		}
		s.Tasks = append(s.Tasks, picked[rng.IntN(next)])
	}
	return s, nil
}

// UserMessage is the user's message that opens task i. It names the tool the task
// needs, in words a model could act on, so that a scripted model can read it back
// (TaskTool).
func (s *Session) UserMessage(i int) []byte {
	t := s.Tasks[i]
	text := fmt.Sprintf("Task %d: please %s the %s in %s for ticket R-%03d (tool %s).",
		i+1, words(t.Verb), words(t.Object), t.Product, 100+i*7%900, t.Name)
	return message("user", text)
}

// ToolResult is the client's answer to the real tool call id of task i: a small result.
func (s *Session) ToolResult(i int, callID string) []byte {
	t := s.Tasks[i]
	content := fmt.Sprintf(`{"ok":true,"tool":%q,"id":"%s-%04d","summary":"%s done"}`, t.Name, t.Object, 1000+i*37%9000, words(t.Verb))
	b, _ := json.Marshal(struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}{"tool", callID, content})
	return b
}

// SystemMessage is the profile's system prompt. salt goes first, so that runs that must
// not share a cached prefix (another strategy on the same engine) do not.
func SystemMessage(salt string) []byte {
	return message("system", salt+"You are an operations agent for Acme. Use the tools to do what the user asks, one step at a time. "+
		"If a tool you need is not loaded, load it with load_tool first. Answer briefly once a task is done.")
}

func message(role, text string) []byte {
	b, _ := json.Marshal(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{role, text})
	return b
}
