package toolsearch

import (
	"sort"
	"strings"
)

// Namespaces group the tools of one server or product. A tool's namespace is the
// lowercased part of its name before the first '.' ("git.commit" → git), or, for a name
// without a dot, before the first '_' when at least two tools of the catalog share that
// prefix ("github_create_issue" and "github_list_issues" → github). A lone "send_email"
// has no namespace, nor do prefixes that are API verbs ("get_weather", "get_time"): they
// say what a tool does, not whose it is.

// namespaces counts the tools that claim each prefix. A request catalog's counts are its
// base's plus its own.
type namespaces struct {
	base *namespaces
	all  map[string]int // prefix → tools whose name starts with it
	dots map[string]int // prefix → tools whose name has it before a '.'
}

func newNamespaces(tools []*Tool, base *namespaces) namespaces {
	n := namespaces{base: base, all: map[string]int{}, dots: map[string]int{}}
	for _, t := range tools {
		n.add(t.Name, 1)
	}
	return n
}

func (n *namespaces) add(name string, d int) {
	p, dot := candidate(name)
	if p == "" {
		return
	}
	n.all[p] += d
	if dot {
		n.dots[p] += d
	}
}

func (n *namespaces) remove(name string) { n.add(name, -1) }

func (n *namespaces) count(p string) (all, dots int) {
	for ; n != nil; n = n.base {
		all += n.all[p]
		dots += n.dots[p]
	}
	return all, dots
}

// exists reports whether p is a namespace of the catalog.
func (n *namespaces) exists(p string) bool {
	all, dots := n.count(p)
	return dots > 0 || (all >= 2 && !verbPrefix(p))
}

// of returns the namespace of the tool called name, or "".
func (n *namespaces) of(name string) string {
	p, dot := candidate(name)
	if p == "" {
		return ""
	}
	if dot {
		return p
	}
	if all, _ := n.count(p); all >= 2 && !verbPrefix(p) {
		return p
	}
	return ""
}

// candidate is the prefix name would have as a namespace, and whether a '.' ends it.
func candidate(name string) (prefix string, dot bool) {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return strings.ToLower(name[:i]), true
	}
	if i := strings.IndexByte(name, '_'); i > 0 {
		return strings.ToLower(name[:i]), false
	}
	return "", false
}

func verbPrefix(p string) bool {
	switch p {
	case "add", "cancel", "check", "close", "copy", "create", "delete", "describe", "do",
		"download", "edit", "execute", "fetch", "find", "generate", "get", "has", "is",
		"list", "make", "move", "new", "open", "patch", "post", "put", "query", "read",
		"remove", "run", "search", "send", "set", "show", "start", "stop", "update",
		"upload", "write":
		return true
	}
	return false
}

// Namespace returns the namespace of the tool called name (see the package doc), or "" for
// a tool without one. name need not be in the catalog.
func (c *Catalog) Namespace(name string) string { return c.ns.of(name) }

// Namespaces returns the catalog's namespaces, sorted.
func (c *Catalog) Namespaces() []string {
	seen := map[string]bool{}
	for n := &c.ns; n != nil; n = n.base {
		for p := range n.all {
			seen[p] = true
		}
	}
	var out []string
	for p := range seen {
		if c.ns.exists(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// InNamespace returns the names of the tools in namespace ns (matched without regard to
// case), in render order; none if ns is not a namespace of the catalog.
func (c *Catalog) InNamespace(ns string) []string {
	ns = strings.ToLower(ns)
	if !c.ns.exists(ns) {
		return nil
	}
	var out []string
	for _, t := range c.tools {
		if c.ns.of(t.Name) == ns {
			out = append(out, t.Name)
		}
	}
	return out
}
