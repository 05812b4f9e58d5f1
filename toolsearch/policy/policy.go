package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Phase is when a rule applies.
type Phase string

// Phases.
const (
	Search Phase = "search" // hide from search_tools results
	Load   Phase = "load"   // refuse load_tool
	Active Phase = "active" // hide an already loaded tool for this request
)

// Phases lists the phases in the order they happen.
var Phases = []Phase{Search, Load, Active}

const numPhases = 3

// Rule is one deny rule, as configuration writes it (see the package doc).
type Rule struct {
	// Name labels the rule in messages and logs; optional.
	Name string `yaml:"name"`
	// Phases are the phases the rule denies in: search, load, active. Required.
	Phases []Phase `yaml:"phases"`
	// Profiles are globs over the request's profile name; none: any profile.
	Profiles []string `yaml:"profiles"`
	// Headers are conditions on request headers, all of which must hold.
	Headers []Match `yaml:"headers"`
	// Metadata are conditions on the request's metadata, all of which must hold.
	Metadata []Match `yaml:"metadata"`
	// Tools are globs over tool names ("git.*", "delete_*").
	Tools []string `yaml:"tools"`
	// Namespaces are globs over tool namespaces ("github").
	Namespaces []string `yaml:"namespaces"`
	// When is a condition over the request that must also hold; nil: none.
	When *Cond `yaml:"when"`
}

// Match is one condition: the header or metadata key Name has a value matching the glob
// Value. An empty Value only requires the key to be present.
type Match struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Request is what rules see of a request. Build it with NewRequest, or by hand.
type Request struct {
	// Key is the caller's identity name (the client key's name); "" for none. NewRequest
	// leaves it empty: set it after.
	Key string
	// Profile is the profile the API key maps to.
	Profile string
	// Header is the request's header; nil for none.
	Header http.Header
	// Metadata is the request's "metadata" object; nil for none.
	Metadata map[string]string
	// MetadataErr is set when the request's "metadata" could not be read; then every
	// metadata condition is taken to hold (a rule that errors denies).
	MetadataErr error
	// Namespace returns a tool's namespace (toolsearch.Catalog.Namespace). If nil, the
	// part of the name before its first '.', or "" for none.
	Namespace func(tool string) string
}

// NewRequest builds a Request, reading metadata (the raw "metadata" member of the chat
// request, or nil) with ParseMetadata.
func NewRequest(profile string, h http.Header, metadata json.RawMessage, namespace func(string) string) Request {
	md, err := ParseMetadata(metadata)
	return Request{Profile: profile, Header: h, Metadata: md, MetadataErr: err, Namespace: namespace}
}

// ParseMetadata reads a request's "metadata" member: absent or null is none; anything but
// a JSON object of string values is an error.
func ParseMetadata(raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var md map[string]string
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf("metadata must be an object of strings: %w", err)
	}
	return md, nil
}

// Policy is a compiled rule set. The zero value and nil allow everything.
type Policy struct {
	rules [numPhases][]*rule // by phase
}

type rule struct {
	profiles   []*regexp.Regexp
	headers    []match
	metadata   []match
	tools      []*regexp.Regexp
	namespaces []*regexp.Regexp
	when       *Cond // a copy of the rule's, checked; nil: none
}

type match struct {
	name  string
	value *regexp.Regexp // nil: presence only
}

// RuleError is a rule Compile rejects. Field is the path within the rule: "phases[1]".
type RuleError struct {
	Index int
	Field string
	Err   error
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("rules[%d].%s: %v", e.Index, e.Field, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Compile checks and compiles rules. The error, a *RuleError, names the first bad field.
func Compile(rules []Rule) (*Policy, error) {
	p := &Policy{}
	for i, r := range rules {
		bad := func(field string, err error) error {
			if fe, ok := err.(*fieldError); ok {
				field, err = field+fe.suffix, fe.err
			}
			return &RuleError{Index: i, Field: field, Err: err}
		}
		if len(r.Phases) == 0 {
			return nil, bad("phases", errors.New("required: list the phases the rule denies in (search, load, active)"))
		}
		c := &rule{}
		var err error
		if c.profiles, err = globs(r.Profiles); err != nil {
			return nil, bad("profiles", err)
		}
		if c.tools, err = globs(r.Tools); err != nil {
			return nil, bad("tools", err)
		}
		if c.namespaces, err = globs(r.Namespaces); err != nil {
			return nil, bad("namespaces", err)
		}
		if c.headers, err = matches(r.Headers, http.CanonicalHeaderKey); err != nil {
			return nil, bad("headers", err)
		}
		if c.metadata, err = matches(r.Metadata, func(s string) string { return s }); err != nil {
			return nil, bad("metadata", err)
		}
		if r.When != nil {
			if err := r.When.Check(); err != nil {
				var ce *CondError
				if errors.As(err, &ce) {
					return nil, bad(ce.Path, ce.Err)
				}
				return nil, bad("when", err)
			}
			w := r.When.clone()
			c.when = &w
		}
		var seen [numPhases]bool
		for j, ph := range r.Phases {
			k := phaseIndex(ph)
			if k < 0 {
				return nil, bad(fmt.Sprintf("phases[%d]", j), fmt.Errorf("unknown phase %q (search, load or active)", ph))
			}
			if !seen[k] {
				seen[k] = true
				p.rules[k] = append(p.rules[k], c)
			}
		}
	}
	return p, nil
}

// fieldError is a problem at suffix ("[2].value") within a rule's field.
type fieldError struct {
	suffix string
	err    error
}

func (e *fieldError) Error() string { return e.suffix + ": " + e.err.Error() }

func globs(gs []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for j, g := range gs {
		re, err := compileGlob(g)
		if err != nil {
			return nil, &fieldError{fmt.Sprintf("[%d]", j), err}
		}
		out = append(out, re)
	}
	return out, nil
}

func matches(ms []Match, canon func(string) string) ([]match, error) {
	var out []match
	for j, m := range ms {
		if m.Name == "" {
			return nil, &fieldError{fmt.Sprintf("[%d].name", j), errors.New("required")}
		}
		c := match{name: canon(m.Name)}
		if m.Value != "" {
			re, err := compileGlob(m.Value)
			if err != nil {
				return nil, &fieldError{fmt.Sprintf("[%d].value", j), err}
			}
			c.value = re
		}
		out = append(out, c)
	}
	return out, nil
}

func phaseIndex(ph Phase) int {
	for i, p := range Phases {
		if p == ph {
			return i
		}
	}
	return -1
}

// Allowed reports whether tool may be used in phase for req: false when any rule naming
// the phase matches. An unknown phase is denied.
func (p *Policy) Allowed(phase Phase, req Request, tool string) bool {
	k := phaseIndex(phase)
	if k < 0 {
		return false
	}
	if p == nil {
		return true
	}
	for _, r := range p.rules[k] {
		if r.matches(&req, tool) {
			return false
		}
	}
	return true
}

// Empty reports whether no rule names phase, so callers can skip filtering.
func (p *Policy) Empty(phase Phase) bool {
	k := phaseIndex(phase)
	return p == nil || k < 0 || len(p.rules[k]) == 0
}

func (r *rule) matches(req *Request, tool string) bool {
	if len(r.profiles) > 0 && !anyMatch(r.profiles, req.Profile) {
		return false
	}
	if len(r.tools) > 0 || len(r.namespaces) > 0 {
		if !anyMatch(r.tools, tool) && (len(r.namespaces) == 0 || !anyMatch(r.namespaces, namespace(req, tool))) {
			return false
		}
	}
	for _, m := range r.headers {
		vs, ok := req.Header[m.name]
		if !ok || (m.value != nil && !anyValue(m.value, vs)) {
			return false
		}
	}
	// With MetadataErr set, metadata conditions cannot be decided and are taken to hold
	// (a rule that errors denies), so they are skipped.
	if req.MetadataErr == nil {
		for _, m := range r.metadata {
			v, ok := req.Metadata[m.name]
			if !ok || (m.value != nil && !m.value.MatchString(v)) {
				return false
			}
		}
	}
	if r.when != nil {
		ok, err := r.when.Eval(*req)
		return ok || err != nil // an undecidable condition holds: the rule denies
	}
	return true
}

func namespace(req *Request, tool string) string {
	if req.Namespace != nil {
		return req.Namespace(tool)
	}
	if i := strings.IndexByte(tool, '.'); i > 0 {
		return tool[:i]
	}
	return ""
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func anyValue(re *regexp.Regexp, vs []string) bool {
	for _, v := range vs {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}
