package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// loadContent is load_tool's result. ToolName is set when one tool is callable after the
// call, ToolNames when several are.
type loadContent struct {
	Success   bool     `json:"success"`
	Message   string   `json:"message"`
	ToolName  string   `json:"toolName,omitempty"`
	ToolNames []string `json:"toolNames,omitempty"`
	// Tools are the definitions this load put into the conversation (strategy index).
	Tools json.RawMessage `json:"tools,omitempty"`
}

const loadUsage = `load_tool needs {"toolName": "exact_name"} or {"toolNames": ["name_a", "name_b"]}, with names from search_tools results`

// maxLoadNames is the most names one load_tool call may give; a namespace counts as one.
const maxLoadNames = 128

func loadTool(ctx context.Context, raw string, env *Env) Outcome {
	args, err := decodeArgs(raw)
	if err != nil {
		return failure("invalid arguments: " + err.Error() + "; " + loadUsage)
	}
	var names []string
	for _, keys := range [][]string{{"toolName", "tool_name", "name"}, {"toolNames", "tool_names", "names"}} {
		v, ok := arg(args, keys...)
		if !ok {
			continue
		}
		ns, ok := stringOrStrings(v)
		if !ok {
			return failure(keys[0] + " must be a string or an array of strings; " + loadUsage)
		}
		names = append(names, ns...)
	}
	if len(names) == 0 {
		return failure("missing toolName; " + loadUsage)
	}
	if len(names) > maxLoadNames {
		return failure(fmt.Sprintf("too many names (%d); load at most %d tools per call", len(names), maxLoadNames))
	}

	var out Outcome
	var ok, already, problems []string
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		ok = append(ok, name)
		if env.loaded(name) {
			already = append(already, name)
		} else {
			out.Load = append(out.Load, name)
		}
	}
	for _, name := range names {
		name = strings.TrimSpace(name)
		switch ns, isNS := namespaceName(name); {
		case name == "":
			problems = append(problems, "An empty tool name was given.")
		case isNS:
			var members []string
			if env.Names != nil {
				members = env.Names.InNamespace(ns)
			}
			if len(members) == 0 {
				problems = append(problems, fmt.Sprintf("There is no namespace %s; call search_tools to find tools.", quote(ns)))
				continue
			}
			for _, m := range members {
				if env.allowed(PhaseLoad, m) {
					add(m)
				}
			}
			if !anyAllowed(env, members) {
				problems = append(problems, fmt.Sprintf("The tools of namespace %s are not available to this request.", quote(ns)))
			}
		case !exists(env, name):
			problems = append(problems, unknownTool(ctx, env, name))
		case !env.allowed(PhaseLoad, name):
			problems = append(problems, fmt.Sprintf("Tool %s is not available to this request; use another tool.", quote(name)))
		default:
			add(name)
		}
	}

	c := loadContent{Success: len(problems) == 0}
	var msg []string
	if len(out.Load) > 0 {
		msg = append(msg, fmt.Sprintf("Loaded %s: call %s directly.", list(out.Load), itOrThem(len(out.Load))))
	}
	if len(already) > 0 {
		msg = append(msg, fmt.Sprintf("%s %s already loaded: call %s directly.", list(already), wasOrWere(len(already)), itOrThem(len(already))))
	}
	c.Message = strings.Join(append(msg, problems...), " ")
	switch {
	case len(ok) == 1:
		c.ToolName = ok[0]
	case len(ok) > 1:
		c.ToolNames = ok
	}
	if c.Tools = env.define(out.Load); c.Tools != nil && len(out.Load) > 0 {
		c.Message += " " + definitionsNote
	}
	out.Content = encode(c)
	out.Err = !c.Success
	return out
}

// Loaded is the result of a load the gateway made without a call of the model's
// (progressive loading under strategy index): names were loaded, defs are the definitions
// it put into the conversation (Env.Define), possibly with others the conversation had
// lost.
func Loaded(names []string, defs json.RawMessage) string {
	c := loadContent{Success: true, Tools: defs}
	switch len(names) {
	case 0:
		c.Message = "These tools are loaded: " + definitionsNote
	case 1:
		c.ToolName = names[0]
	default:
		c.ToolNames = names
	}
	if len(names) > 0 {
		c.Message = fmt.Sprintf("Loaded %s for this message: call %s directly. %s", list(names), itOrThem(len(names)), definitionsNote)
	}
	return encode(c)
}

func anyAllowed(env *Env, names []string) bool {
	for _, n := range names {
		if env.allowed(PhaseLoad, n) {
			return true
		}
	}
	return false
}

func exists(env *Env, name string) bool {
	if env.Names == nil {
		return false
	}
	_, ok := env.Names.Lookup(name)
	return ok
}

// unknownTool is the message for a name the catalog lacks, with up to three close names
// the model may see (PhaseSearch) as suggestions.
func unknownTool(ctx context.Context, env *Env, name string) string {
	msg := fmt.Sprintf("Tool %s does not exist", quote(name))
	if env.Searcher == nil || len(name) > maxEcho {
		return msg + "; call search_tools first."
	}
	var allow func(string) bool
	if env.Allowed != nil {
		allow = func(n string) bool { return env.allowed(PhaseSearch, n) }
	}
	rs, _ := env.search(ctx, name, 3, 0, allow)
	if len(rs) == 0 {
		return msg + "; call search_tools first."
	}
	alts := make([]string, len(rs))
	for i, r := range rs {
		alts[i] = quote(r.Name)
	}
	return fmt.Sprintf("%s; did you mean %s? Otherwise call search_tools first.", msg, strings.Join(alts, " or "))
}

// namespaceName recognises "git.*", "github_*" and "namespace:git", as search does.
func namespaceName(s string) (string, bool) {
	var ns string
	if rest, ok := strings.CutPrefix(s, "namespace:"); ok {
		ns = strings.TrimSpace(rest)
	} else if strings.HasSuffix(s, ".*") || strings.HasSuffix(s, "_*") {
		ns = s[:len(s)-2]
	} else {
		return "", false
	}
	if ns == "" || strings.ContainsAny(ns, " \t\r\n*") {
		return "", false
	}
	return strings.ToLower(ns), true
}

func stringOrStrings(v json.RawMessage) ([]string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []string{s}, true
	}
	var ss []string
	if json.Unmarshal(v, &ss) == nil {
		return ss, true
	}
	return nil, false
}

// list is names quoted and joined: "a", "a" and "b", "a", "b" and "c".
func list(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

func wasOrWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// NotLoadedError is the tool message content for a call to a tool of the catalog that
// is not in the loaded set: the call never reaches the client, and the model is told how
// to load the tool.
func NotLoadedError(name string) string {
	example := jsonString(name)
	if len(name) > maxEcho {
		example = `"<name>"` // not a real tool name: do not repeat it at length
	}
	return encode(errorContent{Error: fmt.Sprintf(`Tool %s is not loaded; call load_tool with {"toolName": %s} first.`, quote(name), example)})
}

// UnknownToolError is the tool message content for a call to a name the catalog lacks.
func UnknownToolError(name string) string {
	return encode(errorContent{Error: fmt.Sprintf("Tool %s does not exist; call search_tools first.", quote(name))})
}

// jsonString is s as a JSON string, for argument examples the model may copy.
func jsonString(s string) string {
	return encode(s)
}
