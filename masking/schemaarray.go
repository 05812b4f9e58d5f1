package masking

import (
	"bytes"
	"strconv"
)

// array renders an array: prefixItems (or a draft-4 items array) for the
// first elements, each present only as minItems requires, then items (or
// additionalItems) for the rest, within minItems and maxItems.
func (w *argRules) array(n *schemaNode, hint string, depth, slot int) string {
	prefix := n.prefixItems
	rest := n.items
	if !n.hasPrefixItems && n.itemsTuple != nil {
		prefix, rest = n.itemsTuple, n.additionalItems
	}
	lo, hi := max(n.minItems, 0), n.maxItems
	if hi >= 0 && hi < lo {
		hi = lo // no instance: keep the wider bound
	}
	if hi >= 0 && len(prefix) > hi {
		prefix = prefix[:hi]
	}
	restNone := string(bytes.TrimSpace(rest)) == "false" || (hi >= 0 && len(prefix) == hi)
	if restNone {
		lo = min(lo, len(prefix))
	}
	if len(prefix) == 0 && rest == nil && n.minItems < 0 && n.maxItems < 0 {
		return w.alias(slot, "json-array")
	}
	if slot < 0 {
		slot = w.reserve(hint) // the array's rule before its parts'
	}
	terms := make([]string, len(prefix))
	for i, p := range prefix {
		terms[i] = w.visit(p, ruleHint(hint, strconv.Itoa(i)), depth+1, -1)
	}
	restTerm := "json-value"
	if !restNone && rest != nil {
		restTerm = w.visit(rest, ruleHint(hint, "item"), depth+1, -1)
	}

	// after(i) is elements i… when i ≥ 1 elements came before.
	var after func(i int) string
	after = func(i int) string {
		if i < len(terms) {
			s := sep + " " + terms[i]
			if tail := after(i + 1); tail != "" {
				s += " " + tail
			}
			if i >= lo {
				return "( " + s + " )?"
			}
			return s
		}
		if restNone {
			return ""
		}
		rhi := -1
		if hi >= 0 {
			rhi = hi - i
		}
		return repeatGroup(sep+" "+restTerm, max(lo-i, 0), rhi)
	}
	var first string
	switch {
	case len(terms) > 0:
		first = terms[0]
	case !restNone:
		first = restTerm
	default:
		return w.define(slot, hint, `"[" ws "]"`)
	}
	body := first
	if tail := after(1); tail != "" {
		body += " " + tail
	}
	if lo == 0 {
		return w.define(slot, hint, `"[" ws ( `+body+` ws )? "]"`)
	}
	return w.define(slot, hint, `"[" ws `+body+` ws "]"`)
}

// repeatGroup is ( seq ){lo,hi}, or nothing when hi is 0.
func repeatGroup(seq string, lo, hi int) string {
	return repeat("( "+seq+" )", lo, hi)
}
