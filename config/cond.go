package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maskgate/maskgate/toolsearch/policy"
)

// Cond is a condition over the request, written under "when" (toolsearch/policy.Cond owns
// its meaning). It is a leaf, a field with exactly one operator:
//
//	when: {field: metadata.plan, equals: pro}
//	when: {field: header.X-Env, in: [prod, production]}
//	when: {field: key, prefix: ci-}
//	when: {field: header.X-Approved, exists: false}
//
// or a node, exactly one of all, any and not:
//
//	when:
//	  any:
//	    - {field: profile, equals: contractors}
//	    - not: {field: metadata.plan, in: [pro, enterprise]}
//
// A leaf on a field the request does not have is false, whatever its operator, so not of
// it is true: not: {field: metadata.plan, equals: pro} holds for a request with no plan.
type Cond struct {
	// Field is what a leaf reads: key (the caller's identity name), profile, header.NAME
	// (any case) or metadata.NAME.
	Field string `yaml:"field"`
	// Equals: the value is this string exactly.
	Equals *string `yaml:"equals"`
	// In: the value is one of these.
	In []string `yaml:"in"`
	// Exists: true, the field is present (even empty); false, it is absent.
	Exists *bool `yaml:"exists"`
	// Prefix: the value starts with this string.
	Prefix *string `yaml:"prefix"`
	// All: every condition holds. Any: at least one does. Not: the condition does not.
	All []Cond `yaml:"all"`
	Any []Cond `yaml:"any"`
	Not *Cond  `yaml:"not"`
}

// maxCondDepth bounds how deep conditions nest, below policy's own limit, which counts
// exists: false as two levels.
const maxCondDepth = 32

// Policy converts c to the policy's form; exists: false becomes not of exists. A Cond that
// checkCond accepts converts to one that policy.Cond.Check accepts; one it would reject
// converts to one that Check rejects too.
func (c *Cond) Policy() policy.Cond {
	var node policy.Cond
	if c.All != nil {
		node.All = condList(c.All)
	}
	if c.Any != nil {
		node.Any = condList(c.Any)
	}
	if c.Not != nil {
		n := c.Not.Policy()
		node.Not = &n
	}
	ops := c.operators()
	if c.Field == "" && len(ops) == 0 {
		return node // one node, or none or several, which Check rejects
	}
	if node.All != nil || node.Any != nil || node.Not != nil {
		node.Field, node.Op = c.Field, policy.Exists // a leaf and a node: Check rejects it
		return node
	}
	if len(ops) != 1 {
		return policy.Cond{Field: c.Field} // no operator: Check rejects it
	}
	switch ops[0] {
	case "equals":
		return policy.Cond{Field: c.Field, Op: policy.Equals, Values: []string{*c.Equals}}
	case "prefix":
		return policy.Cond{Field: c.Field, Op: policy.Prefix, Values: []string{*c.Prefix}}
	case "in":
		return policy.Cond{Field: c.Field, Op: policy.In, Values: append([]string{}, c.In...)}
	}
	leaf := policy.Cond{Field: c.Field, Op: policy.Exists}
	if !*c.Exists {
		return policy.Cond{Not: &leaf}
	}
	return leaf
}

func condList(cs []Cond) []policy.Cond {
	out := make([]policy.Cond, len(cs))
	for i := range cs {
		out[i] = cs[i].Policy()
	}
	return out
}

// operators lists the operator keys c sets, in the order of the struct.
func (c *Cond) operators() []string {
	var ops []string
	if c.Equals != nil {
		ops = append(ops, "equals")
	}
	if c.In != nil {
		ops = append(ops, "in")
	}
	if c.Exists != nil {
		ops = append(ops, "exists")
	}
	if c.Prefix != nil {
		ops = append(ops, "prefix")
	}
	return ops
}

// checkCond validates a condition written at key (filters[0].when), naming the first
// problem by file, line and key path. A nil cond is none, and valid.
func (c *Config) checkCond(file, key string, cond *Cond) error {
	return c.checkCondAt(file, key, cond, 0)
}

func (c *Config) checkCondAt(file, key string, cond *Cond, depth int) error {
	if cond == nil {
		return nil
	}
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if depth >= maxCondDepth {
		return bad(key, "conditions nest more than %d deep", maxCondDepth)
	}
	var nodes []string
	if cond.All != nil {
		nodes = append(nodes, "all")
	}
	if cond.Any != nil {
		nodes = append(nodes, "any")
	}
	if cond.Not != nil {
		nodes = append(nodes, "not")
	}
	ops := cond.operators()
	switch {
	case len(nodes) > 0 && (cond.Field != "" || len(ops) > 0):
		what := "field"
		if cond.Field == "" {
			what = ops[0]
		}
		return bad(key+"."+what, "a condition is either a field with an operator or one of all, any and not (here: %s and %s); to combine them, list both under all", what, nodes[0])
	case len(nodes) > 1:
		return bad(key+"."+nodes[1], "set only one of all, any and not (here: %s and %s); to combine them, list both under all", nodes[0], nodes[1])
	case len(nodes) == 1 && nodes[0] == "not":
		return c.checkCondAt(file, key+".not", cond.Not, depth+1)
	case len(nodes) == 1:
		list := cond.All
		if nodes[0] == "any" {
			list = cond.Any
		}
		if len(list) == 0 {
			return bad(key+"."+nodes[0], "empty list: give at least one condition")
		}
		for i := range list {
			if err := c.checkCondAt(file, fmt.Sprintf("%s.%s[%d]", key, nodes[0], i), &list[i], depth+1); err != nil {
				return err
			}
		}
		return nil
	case cond.Field == "" && len(ops) == 0:
		return bad(key, "empty condition: set field with an operator (equals, in, exists or prefix), or all, any or not")
	case cond.Field == "":
		return bad(key+".field", "required with %s: key, profile, header.NAME or metadata.NAME", ops[0])
	}
	if err := checkCondField(cond.Field); err != nil {
		return bad(key+".field", "%v", err)
	}
	switch {
	case len(ops) == 0:
		return bad(key+".field", "needs an operator: equals, in, exists or prefix")
	case len(ops) > 1:
		return bad(key+"."+ops[1], "set one operator, not %s", strings.Join(ops, " and "))
	case ops[0] == "in" && len(cond.In) == 0:
		return bad(key+".in", "empty list: give at least one value")
	}
	return nil
}

// checkCondField checks a leaf's field as the policy will, so the two never disagree.
func checkCondField(field string) error {
	leaf := policy.Cond{Field: field, Op: policy.Exists}
	err := leaf.Check()
	var ce *policy.CondError
	if errors.As(err, &ce) {
		return ce.Err
	}
	return err
}
