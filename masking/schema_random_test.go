package masking

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// genSchema is a random schema built from the keywords the renderer
// expresses exactly, with generators of instances written in the forms the
// grammar writes: valid gives an instance the schema admits, near gives one
// that is valid except maybe one mutation (a wrong type, a missing required
// key, an extra key, a string or array out of bounds, an enum miss). Tests
// decide validity with internal/schemacheck, never with these generators'
// intent.
type genSchema struct {
	json  string
	valid func(r *rand.Rand) string
	near  func(r *rand.Rand) string
}

// schemaGen builds random schemas; defs collects the subschemas placed in
// $defs and referred to.
type schemaGen struct {
	r    *rand.Rand
	defs []string
}

// randomToolSchema is a random tool parameters schema: an object, with
// $defs when some subschema was hoisted there.
func randomToolSchema(r *rand.Rand) genSchema {
	g := &schemaGen{r: r}
	s := g.object(0)
	if len(g.defs) > 0 {
		s.json = `{"$defs":{` + strings.Join(g.defs, ",") + `},` + s.json[1:]
	}
	return s
}

func (g *schemaGen) node(depth int) genSchema {
	var s genSchema
	k := g.r.IntN(12)
	if depth >= 3 {
		k = g.r.IntN(7)
	}
	switch k {
	case 0, 1:
		s = g.str()
	case 2:
		s = leaf(`{"type":"integer"}`, func(r *rand.Rand) string { return strconv.Itoa(r.IntN(2001) - 1000) }, `1.5`, `"7"`)
	case 3:
		s = leaf(`{"type":"number"}`, func(r *rand.Rand) string {
			return []string{"0", "-3", "2.5", "1e3", "-0.125E-2"}[r.IntN(5)]
		}, `"2"`, `true`)
	case 4:
		s = leaf(`{"type":"boolean"}`, func(r *rand.Rand) string { return []string{"true", "false"}[r.IntN(2)] }, `1`, `"true"`)
	case 5:
		s = g.enum()
	case 6:
		s = leaf(`{}`, func(r *rand.Rand) string { return randomJSON(r, 2) }, randomJSON(g.r, 1))
	case 7, 8:
		s = g.object(depth + 1)
	case 9, 10:
		s = g.array(depth + 1)
	case 11:
		s = g.anyOf(depth + 1)
	}
	if g.r.IntN(5) == 0 && depth > 0 {
		name := "d" + strconv.Itoa(len(g.defs))
		g.defs = append(g.defs, `"`+name+`":`+s.json)
		s.json = `{"$ref":"#/$defs/` + name + `"}`
	}
	return s
}

func leaf(schema string, valid func(*rand.Rand) string, wrong ...string) genSchema {
	return genSchema{json: schema, valid: valid, near: func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return valid(r)
		}
		return wrong[r.IntN(len(wrong))]
	}}
}

// strChars are one character each, as written in a JSON string.
var strChars = []string{"a", "b", "z", " ", "é", "日", "😀", `\"`, `\\`, `\n`, `\u00e9`, `\/`}

func randString(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteByte('"')
	for range n {
		b.WriteString(strChars[r.IntN(len(strChars))])
	}
	b.WriteByte('"')
	return b.String()
}

func (g *schemaGen) str() genSchema {
	lo, hi := 0, -1
	schema := `{"type":"string"`
	if g.r.IntN(2) == 0 {
		lo = g.r.IntN(3)
		schema += `,"minLength":` + strconv.Itoa(lo)
	}
	if g.r.IntN(2) == 0 {
		hi = lo + g.r.IntN(5)
		schema += `,"maxLength":` + strconv.Itoa(hi)
	}
	if g.r.IntN(4) == 0 {
		schema += `,"nullable":true`
	}
	schema += "}"
	top := hi
	if top < 0 {
		top = lo + 6
	}
	valid := func(r *rand.Rand) string { return randString(r, lo+r.IntN(top-lo+1)) }
	return genSchema{json: schema, valid: valid, near: func(r *rand.Rand) string {
		switch r.IntN(4) {
		case 0:
			if hi >= 0 {
				return randString(r, hi+1)
			}
		case 1:
			if lo > 0 {
				return randString(r, lo-1)
			}
		case 2:
			return []string{"null", "12", "[]"}[r.IntN(3)]
		}
		return valid(r)
	}}
}

func (g *schemaGen) enum() genSchema {
	pool := []string{`"a"`, `"b c"`, `"日本"`, `1`, `-2.5`, `null`, `true`, `{"k":[1,"x"]}`, `[]`}
	g.r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	vals := pool[:1+g.r.IntN(4)]
	var schema string
	if len(vals) == 1 && g.r.IntN(2) == 0 {
		schema = `{"const":` + vals[0] + `}`
	} else {
		schema = `{"enum":[` + strings.Join(vals, ",") + `]}`
	}
	vals = append([]string(nil), vals...)
	return genSchema{json: schema,
		valid: func(r *rand.Rand) string { return vals[r.IntN(len(vals))] },
		near: func(r *rand.Rand) string {
			if r.IntN(2) == 0 {
				return vals[r.IntN(len(vals))]
			}
			return []string{`"zz"`, `2`, `false`, `{"k":[1]}`, `"A"`}[r.IntN(5)]
		}}
}

var propNames = []string{"a", "ab", "b", "name", "names", "日本", "x_y", "q\\\"k"}

func (g *schemaGen) object(depth int) genSchema {
	type prop struct {
		key string // JSON text of the key
		s   genSchema
		req bool
	}
	names := append([]string(nil), propNames...)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	var props []prop
	for _, n := range names[:g.r.IntN(5)] {
		props = append(props, prop{key: `"` + n + `"`, s: g.node(depth), req: g.r.IntN(2) == 0})
	}
	extra := []string{"absent", "false", "true", "schema"}[g.r.IntN(4)]
	var extraS genSchema
	var b strings.Builder
	b.WriteString(`{"type":"object"`)
	if len(props) > 0 || g.r.IntN(2) == 0 {
		b.WriteString(`,"properties":{`)
		for i, p := range props {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.key + ":" + p.s.json)
		}
		b.WriteString("}")
	} else if extra == "absent" {
		extra = "true" // no "properties": any key
	}
	var req []string
	for _, p := range props {
		if p.req {
			req = append(req, p.key)
		}
	}
	if len(req) > 0 {
		b.WriteString(`,"required":[` + strings.Join(req, ",") + `]`)
	}
	switch extra {
	case "false", "true":
		b.WriteString(`,"additionalProperties":` + extra)
	case "schema":
		extraS = g.node(3)
		b.WriteString(`,"additionalProperties":` + extraS.json)
	}
	b.WriteString("}")
	if extra == "absent" {
		extra = "false"
	}
	write := func(r *rand.Rand, mutate bool) string {
		var kvs []string
		drop := -1
		if mutate && len(req) > 0 && r.IntN(3) == 0 {
			drop = r.IntN(len(props))
		}
		bad := -1
		if mutate && len(props) > 0 && r.IntN(2) == 0 {
			bad = r.IntN(len(props))
		}
		for pass := range 2 { // required ones first, then optional ones
			for i, p := range props {
				if p.req != (pass == 0) || i == drop || (!p.req && r.IntN(2) == 0) {
					continue
				}
				v := p.s.valid(r)
				if i == bad {
					v = p.s.near(r)
				}
				kvs = append(kvs, p.key+[]string{": ", ":", ":\n  "}[r.IntN(3)]+v)
			}
		}
		if extra != "false" && r.IntN(2) == 0 || mutate && r.IntN(4) == 0 {
			v := randomJSON(r, 1)
			if extra == "schema" {
				v = extraS.valid(r)
				if mutate {
					v = extraS.near(r)
				}
			}
			kvs = append(kvs, `"zz`+strconv.Itoa(r.IntN(9))+`": `+v)
		}
		if mutate && r.IntN(8) == 0 {
			return "[" + strings.Join(kvs, ", ") + "]"
		}
		if len(kvs) == 0 {
			return []string{"{}", "{ }", "{\n}"}[r.IntN(3)]
		}
		return "{" + strings.Join(kvs, []string{", ", ",", ",\n  "}[r.IntN(3)]) + "}"
	}
	return genSchema{json: b.String(),
		valid: func(r *rand.Rand) string { return write(r, false) },
		near:  func(r *rand.Rand) string { return write(r, true) }}
}

func (g *schemaGen) array(depth int) genSchema {
	var b strings.Builder
	b.WriteString(`{"type":"array"`)
	var prefix []genSchema
	if g.r.IntN(3) == 0 {
		b.WriteString(`,"prefixItems":[`)
		for i := range 1 + g.r.IntN(2) {
			p := g.node(depth)
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.json)
			prefix = append(prefix, p)
		}
		b.WriteString("]")
	}
	items := g.node(depth)
	restNone := len(prefix) > 0 && g.r.IntN(2) == 0
	if restNone {
		b.WriteString(`,"items":false`)
	} else {
		b.WriteString(`,"items":` + items.json)
	}
	lo, hi := 0, -1
	if g.r.IntN(2) == 0 {
		lo = g.r.IntN(3)
		if restNone {
			lo = g.r.IntN(len(prefix) + 1) // more would admit nothing
		}
		b.WriteString(`,"minItems":` + strconv.Itoa(lo))
	}
	if g.r.IntN(2) == 0 {
		hi = lo + g.r.IntN(4)
		b.WriteString(`,"maxItems":` + strconv.Itoa(hi))
	}
	b.WriteString("}")
	maxN := hi
	if maxN < 0 {
		maxN = lo + 3
	}
	if restNone {
		maxN = min(maxN, len(prefix))
	}
	write := func(r *rand.Rand, mutate bool) string {
		n := lo
		if maxN > lo {
			n += r.IntN(maxN - lo + 1)
		}
		if mutate && r.IntN(3) == 0 {
			n = max(0, n+[]int{-1, 1}[r.IntN(2)]+[]int{0, 0, 1}[r.IntN(3)])
		}
		bad := -1
		if mutate && n > 0 {
			bad = r.IntN(n)
		}
		var el []string
		for i := range n {
			s := items
			if i < len(prefix) {
				s = prefix[i]
			}
			v := s.valid(r)
			if i == bad {
				v = s.near(r)
			}
			el = append(el, v)
		}
		return "[" + strings.Join(el, []string{", ", ",", ",\n  "}[r.IntN(3)]) + "]"
	}
	return genSchema{json: b.String(),
		valid: func(r *rand.Rand) string { return write(r, false) },
		near:  func(r *rand.Rand) string { return write(r, true) }}
}

func (g *schemaGen) anyOf(depth int) genSchema {
	n := 2 + g.r.IntN(2)
	alts := make([]genSchema, n)
	var js []string
	for i := range alts {
		alts[i] = g.node(depth)
		js = append(js, alts[i].json)
	}
	return genSchema{json: `{"anyOf":[` + strings.Join(js, ",") + `]}`,
		valid: func(r *rand.Rand) string { return alts[r.IntN(n)].valid(r) },
		near:  func(r *rand.Rand) string { return alts[r.IntN(n)].near(r) }}
}

// randomJSON is a random JSON value in the grammar's forms.
func randomJSON(r *rand.Rand, depth int) string {
	k := r.IntN(7)
	if depth <= 0 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return randString(r, r.IntN(4))
	case 1:
		return strconv.Itoa(r.IntN(100) - 50)
	case 2:
		return []string{"true", "false"}[r.IntN(2)]
	case 3:
		return "null"
	case 4:
		return "-1.25e2"
	case 5:
		var el []string
		for range r.IntN(3) {
			el = append(el, randomJSON(r, depth-1))
		}
		return "[" + strings.Join(el, ", ") + "]"
	}
	var kv []string
	for i := range r.IntN(3) {
		kv = append(kv, fmt.Sprintf(`"k%d": %s`, i, randomJSON(r, depth-1)))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}
