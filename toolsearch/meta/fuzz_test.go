package meta

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzExecute feeds arbitrary argument strings, as a model might write them, to both
// meta-tools: Execute must not panic, must return valid JSON, and may only load tools the
// catalog has and the policy allows.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"query":"github issue"}`, `{"query":"git.*"}`, `{"query":""}`,
		`{"toolName":"git.commit"}`, `{"toolNames":["git.*","send_email","x"]}`, `{"toolName":["a"]}`,
		`"{\"query\":\"mail\"}"`, `{"query":"\u0000\ud800"}`, `{"toolName":"namespace:slack"}`, `{"toolName":"_*"}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	env := testEnv(f, "git.push")
	names := env.Names
	f.Fuzz(func(t *testing.T, args string, auto bool) {
		e := env
		e.AutoLoad = auto
		e.Allowed = denyAdmin
		for _, name := range []string{SearchTools, LoadTool} {
			out := Execute(context.Background(), Call{Name: name, Arguments: args}, e)
			if !json.Valid([]byte(out.Content)) {
				t.Fatalf("%s(%q): content is not JSON: %q", name, args, out.Content)
			}
			for _, n := range out.Load {
				if _, ok := names.Lookup(n); !ok || !denyAdmin(PhaseLoad, n) {
					t.Fatalf("%s(%q) loads %q", name, args, n)
				}
			}
		}
	})
}
