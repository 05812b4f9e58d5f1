package main

import (
	"fmt"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

// compilePolicy turns the config's filters into a policy, so that a bad glob stops the
// gateway at start rather than misbehaving on a request.
func compilePolicy(filters []config.Filter) (*policy.Policy, error) {
	rules := make([]policy.Rule, len(filters))
	for i, f := range filters {
		r := policy.Rule{Name: f.Name, Profiles: f.Profiles, Tools: f.Tools, Namespaces: f.Namespaces}
		for _, p := range f.Phases {
			r.Phases = append(r.Phases, policy.Phase(p))
		}
		for _, h := range f.Headers {
			r.Headers = append(r.Headers, policy.Match{Name: h.Name, Value: h.Value})
		}
		for _, m := range f.Metadata {
			r.Metadata = append(r.Metadata, policy.Match{Name: m.Name, Value: m.Value})
		}
		if f.When != nil {
			w := compileCond(f.When)
			r.When = &w
		}
		rules[i] = r
	}
	p, err := policy.Compile(rules)
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	return p, nil
}

// compileCond turns a configured condition (a filter's or a variant's "when") into the
// policy's form; exists: false becomes not of exists. Config has validated it; callers
// still pass the result through policy (Compile, or Cond.Check) to fail at start. A nil c
// gives the zero Cond, which Check rejects: test for nil first, where "when" is optional.
func compileCond(c *config.Cond) policy.Cond {
	if c == nil {
		return policy.Cond{}
	}
	return c.Policy()
}
