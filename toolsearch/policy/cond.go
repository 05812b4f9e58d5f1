package policy

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Op is a condition leaf's operator.
type Op string

// Operators. Comparisons are exact and case-sensitive; there are no globs in conditions.
const (
	Equals Op = "equals" // the value is Values[0]
	In     Op = "in"     // the value is one of Values
	Exists Op = "exists" // the value is present, even empty; no Values
	Prefix Op = "prefix" // the value starts with Values[0]
)

// Fields a condition leaf can read. Header and metadata fields name their key after the
// prefix: "header.X-Team", "metadata.plan".
const (
	fieldKey      = "key"     // Request.Key, the caller's identity name
	fieldProfile  = "profile" // Request.Profile
	headerPrefix  = "header."
	metaPrefix    = "metadata."
	maxCondDepth  = 64 // deeper trees are refused (Check) or undecidable (Eval)
	condRootLabel = "when"
)

// Cond is a condition over the request: a leaf (Field and Op, with Values) or a node
// (exactly one of All, Any and Not). See the package doc for how it reads a request.
type Cond struct {
	// Field is what a leaf reads: "key", "profile", "header.NAME" (NAME case-insensitive)
	// or "metadata.NAME".
	Field string
	// Op is the leaf's operator.
	Op Op
	// Values are the operands: one for Equals and Prefix, one or more for In, none for
	// Exists.
	Values []string

	// All holds when every condition in it holds.
	All []Cond
	// Any holds when at least one condition in it holds.
	Any []Cond
	// Not holds when its condition does not.
	Not *Cond
}

// CondError is a condition Check rejects. Path is where, as configuration writes it and
// rooted at "when": "when", "when.all[1].field", "when.not.values".
type CondError struct {
	Path string
	Err  error
}

func (e *CondError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *CondError) Unwrap() error { return e.Err }

// ErrCondInvalid is wrapped by Eval's error for a condition Check would reject.
var ErrCondInvalid = errors.New("invalid condition")

// Check reports whether c is well formed: a leaf with a known field and an operator with
// the right number of values, or a node with exactly one of All, Any (each non-empty) and
// Not, nested at most 64 deep. The error is a *CondError naming the first bad place.
func (c *Cond) Check() error {
	return c.check(condRootLabel, 0)
}

func (c *Cond) check(path string, depth int) error {
	bad := func(sub, format string, args ...any) error {
		return &CondError{Path: path + sub, Err: fmt.Errorf(format, args...)}
	}
	if depth >= maxCondDepth {
		return bad("", "nested more than %d deep", maxCondDepth)
	}
	nodes := 0
	if c.All != nil {
		nodes++
	}
	if c.Any != nil {
		nodes++
	}
	if c.Not != nil {
		nodes++
	}
	leaf := c.Field != "" || c.Op != "" || c.Values != nil
	switch {
	case leaf && nodes > 0:
		return bad("", "a condition is either a field with an operator, or one of all, any and not; not both")
	case nodes > 1:
		return bad("", "set only one of all, any and not (nest them to combine)")
	case leaf:
		return c.checkLeaf(path)
	case c.All != nil:
		return checkList(c.All, path+".all", depth)
	case c.Any != nil:
		return checkList(c.Any, path+".any", depth)
	case c.Not != nil:
		return c.Not.check(path+".not", depth+1)
	}
	return bad("", "empty condition: set a field with an operator, or all, any or not")
}

func checkList(cs []Cond, path string, depth int) error {
	if len(cs) == 0 {
		return &CondError{Path: path, Err: errors.New("empty list: give at least one condition")}
	}
	for i := range cs {
		if err := cs[i].check(fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cond) checkLeaf(path string) error {
	if err := checkField(c.Field); err != nil {
		return &CondError{Path: path + ".field", Err: err}
	}
	want := ""
	switch c.Op {
	case Equals, Prefix:
		if len(c.Values) != 1 {
			want = "exactly one value"
		}
	case In:
		if len(c.Values) == 0 {
			want = "at least one value"
		}
	case Exists:
		if len(c.Values) != 0 {
			want = "no values"
		}
	case "":
		return &CondError{Path: path + ".op", Err: fmt.Errorf("required with field %q: equals, in, exists or prefix", c.Field)}
	default:
		return &CondError{Path: path + ".op", Err: fmt.Errorf("unknown operator %q (equals, in, exists or prefix)", c.Op)}
	}
	if want != "" {
		return &CondError{Path: path + ".values", Err: fmt.Errorf("%s takes %s, got %d", c.Op, want, len(c.Values))}
	}
	return nil
}

func checkField(f string) error {
	switch {
	case f == fieldKey || f == fieldProfile:
		return nil
	case strings.HasPrefix(f, headerPrefix):
		name := f[len(headerPrefix):]
		if name == "" {
			return fmt.Errorf("%q names no header: write header.NAME", f)
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				return fmt.Errorf("%q: %q is not a valid header name", f, name)
			}
		}
		return nil
	case strings.HasPrefix(f, metaPrefix):
		if f == metaPrefix {
			return fmt.Errorf("%q names no key: write metadata.NAME", f)
		}
		return nil
	case f == "":
		return errors.New("required: key, profile, header.NAME or metadata.NAME")
	}
	return fmt.Errorf("unknown field %q (key, profile, header.NAME or metadata.NAME)", f)
}

// isTokenChar reports whether b may appear in an HTTP header name (RFC 9110 tchar).
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// Eval reports whether c holds for r. The error is not nil only when the answer depends
// on something that cannot be decided: a metadata leaf while r.MetadataErr is set, or a
// part of c that Check would reject (wrapping ErrCondInvalid). Errors read as "unknown":
//
//   - Not of an unknown is unknown (the error is returned);
//   - All is false when any of its conditions is false, even if others error; else it
//     errors when any of them errors; else it is true;
//   - Any is true when any of its conditions is true, even if others error; else it
//     errors when any of them errors; else it is false.
//
// Callers decide what an unknown means: a filter takes it to hold (a rule that errors
// denies), a variant takes it not to. Eval never panics, whatever c is.
func (c *Cond) Eval(r Request) (bool, error) {
	return c.eval(&r, condRootLabel, 0)
}

func (c *Cond) eval(r *Request, path string, depth int) (bool, error) {
	if depth >= maxCondDepth {
		return false, fmt.Errorf("%s: %w: nested more than %d deep", path, ErrCondInvalid, maxCondDepth)
	}
	nodes := 0
	for _, set := range []bool{c.All != nil, c.Any != nil, c.Not != nil} {
		if set {
			nodes++
		}
	}
	leaf := c.Field != "" || c.Op != "" || c.Values != nil
	switch {
	case nodes > 1 || (leaf && nodes > 0):
		return false, fmt.Errorf("%s: %w: mixes a leaf, all, any or not", path, ErrCondInvalid)
	case leaf:
		return c.evalLeaf(r, path)
	case c.Not != nil:
		ok, err := c.Not.eval(r, path+".not", depth+1)
		return !ok && err == nil, err
	case c.All != nil:
		return evalList(c.All, r, path+".all", depth, false)
	case c.Any != nil:
		return evalList(c.Any, r, path+".any", depth, true)
	}
	return false, fmt.Errorf("%s: %w: empty", path, ErrCondInvalid)
}

// evalList is All (decisive false) or Any (decisive true): the first decisive answer wins
// over errors, which are returned only when no condition is decisive.
func evalList(cs []Cond, r *Request, path string, depth int, decisive bool) (bool, error) {
	if len(cs) == 0 {
		return false, fmt.Errorf("%s: %w: empty list", path, ErrCondInvalid)
	}
	var first error
	for i := range cs {
		ok, err := cs[i].eval(r, fmt.Sprintf("%s[%d]", path, i), depth+1)
		switch {
		case err != nil:
			if first == nil {
				first = err
			}
		case ok == decisive:
			return decisive, nil
		}
	}
	if first != nil {
		return false, first
	}
	return !decisive, nil
}

func (c *Cond) evalLeaf(r *Request, path string) (bool, error) {
	if err := c.checkLeaf(path); err != nil {
		return false, fmt.Errorf("%w: %v", ErrCondInvalid, err)
	}
	var vs []string
	switch f := c.Field; {
	case f == fieldKey:
		if r.Key != "" {
			vs = []string{r.Key}
		}
	case f == fieldProfile:
		if r.Profile != "" {
			vs = []string{r.Profile}
		}
	case strings.HasPrefix(f, headerPrefix):
		vs = headerValues(r, f[len(headerPrefix):])
	default: // metadata, as checkLeaf allowed
		if r.MetadataErr != nil {
			return false, fmt.Errorf("%s: %s cannot be read: %w", path, f, r.MetadataErr)
		}
		if v, ok := r.Metadata[f[len(metaPrefix):]]; ok {
			vs = []string{v}
		}
	}
	if vs == nil {
		return false, nil // absent: no operator holds
	}
	if c.Op == Exists {
		return true, nil
	}
	for _, v := range vs {
		for _, want := range c.Values {
			if (c.Op == Prefix && strings.HasPrefix(v, want)) || (c.Op != Prefix && v == want) {
				return true, nil
			}
		}
	}
	return false, nil
}

// headerValues returns the values of header name, nil when it is absent. A header built
// by hand may hold names that are not canonical; they are found too.
func headerValues(r *Request, name string) []string {
	if r.Header == nil {
		return nil
	}
	if vs, ok := r.Header[http.CanonicalHeaderKey(name)]; ok {
		return nonNil(vs)
	}
	var out []string
	for k, vs := range r.Header {
		if strings.EqualFold(k, name) {
			out = append(out, nonNil(vs)...)
			if out == nil {
				out = []string{}
			}
		}
	}
	return out
}

func nonNil(vs []string) []string {
	if vs == nil {
		return []string{}
	}
	return vs
}

// clone copies c deeply, so that a compiled Policy does not share the caller's slices.
func (c *Cond) clone() Cond {
	out := Cond{Field: c.Field, Op: c.Op}
	if c.Values != nil {
		out.Values = append([]string{}, c.Values...)
	}
	out.All = cloneList(c.All)
	out.Any = cloneList(c.Any)
	if c.Not != nil {
		n := c.Not.clone()
		out.Not = &n
	}
	return out
}

func cloneList(cs []Cond) []Cond {
	if cs == nil {
		return nil
	}
	out := make([]Cond, len(cs))
	for i := range cs {
		out[i] = cs[i].clone()
	}
	return out
}
