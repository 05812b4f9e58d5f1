package masking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TriggerType is llama.cpp's common_grammar_trigger_type, sent as a number in
// grammar_triggers (common/common.h: TOKEN 0, WORD 1, PATTERN 2, PATTERN_FULL 3).
type TriggerType int

const (
	TriggerToken       TriggerType = 0
	TriggerWord        TriggerType = 1
	TriggerPattern     TriggerType = 2
	TriggerPatternFull TriggerType = 3
)

// GrammarTrigger is one entry of llama-server's grammar_triggers.
type GrammarTrigger struct {
	Type  TriggerType `json:"type"`
	Value string      `json:"value"`
}

// Grammar is the constraint for llama-server's POST /completion, as the
// request fields it goes in (tools/server/README.md, /completion options:
// grammar, grammar_lazy, grammar_triggers, preserved_tokens).
//
// llama-server turns a WORD trigger that tokenizes to one token into a TOKEN
// trigger and refuses the request ("Grammar trigger word should be marked as
// preserved token") unless that token is in preserved_tokens; a word that
// spans several tokens stays a text trigger. PreservedTokens therefore always
// lists the format's markers; entries that are not one token are ignored by
// the server.
type Grammar struct {
	// Grammar is the GBNF text; its root matches one or more whole calls,
	// starting at the trigger.
	Grammar string `json:"grammar"`
	// Lazy is true in ModeAuto: free text until a trigger, then the grammar
	// from the trigger on. False in ModeRequired and ModeSpecified, where the
	// output must start with a call.
	Lazy bool `json:"grammar_lazy"`
	// Triggers is empty when Lazy is false.
	Triggers        []GrammarTrigger `json:"grammar_triggers,omitempty"`
	PreservedTokens []string         `json:"preserved_tokens,omitempty"`
}

// ErrNoCallAllowed is returned in ModeAuto with no allowed name: no grammar
// can express "never start a call" in llama.cpp (an unsatisfiable rule would
// leave no token to sample once triggered). The caller bans the trigger
// instead (logit_bias, exact only where the trigger is one special token) or
// uses the remove strategy.
var ErrNoCallAllowed = errors.New("masking: no tool may be called; ban the trigger instead of sending a grammar")

// GBNF renders spec as a llama.cpp grammar (grammars/README.md syntax).
//
// Each allowed name is one alternative of the tool rule, paired with that
// tool's own arguments rule, rendered from params[name] (its JSON Schema as
// the client wrote it; absent or null for any object) as the package doc
// describes: the grammar for name A admits only A's arguments. Names come
// in the spec's order after deduplication (the order callers already keep
// stable: meta-tools, then loads in load order), so equal specs and schemas
// give equal bytes and the grammar reads like the loaded set. The gateway
// still validates arguments after decoding: a schema keyword the grammar
// does not express only widens it. Parameters that are not JSON are an
// error naming the tool.
//
// Alternatives end lines with "|": llama.cpp ends a rule at a newline
// unless an operator or an open parenthesis carries it on.
//
// The root admits parallel calls where the format has them (Hermes: one
// newline between calls, as Hermes/Qwen templates write them; Mistral and
// DeepSeek: back to back), unless spec.OneCall; once the last call is closed
// only end of generation remains (llama.cpp allows EOG when the grammar is complete).
// The grammar starts at the trigger when lazy, and at the format's Lead
// otherwise. Only the built-in formats can be rendered; see FormatByName.
func GBNF(spec Spec, params map[string]json.RawMessage) (Grammar, error) {
	r, err := newGBNFRender(spec, params)
	if err != nil {
		return Grammar{}, err
	}
	return r.grammar(), nil
}

// CallGBNF is the grammar of one call of spec from just after its trigger
// to the end of the call: the rest of the format's opening text, an allowed
// name, its arguments and the call's closing text. It is for an engine that
// finds the trigger itself and then runs llama.cpp's grammar over the call
// (the embedded engine, whose token mask watches free text); llama-server
// takes GBNF instead. Mode and Lead do not change it.
func CallGBNF(spec Spec, params map[string]json.RawMessage) (string, error) {
	r, err := newGBNFRender(spec, params)
	if err != nil {
		return "", err
	}
	return r.call(), nil
}

// gbnfRender is one grammar to write: the format's parts and the allowed
// tools, each with its arguments block.
type gbnfRender struct {
	spec   Spec
	parts  callParts
	names  []string
	blocks []argBlock
	// flatNames writes the tool rule as one alternative per name, the form before the
	// radix tree; only BenchmarkGrammarDecode sets it, to measure the two side by side.
	flatNames bool
}

func newGBNFRender(spec Spec, params map[string]json.RawMessage) (*gbnfRender, error) {
	names, err := spec.names()
	if err != nil {
		return nil, err
	}
	parts, err := partsOf(spec.Format)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, ErrNoCallAllowed
	}
	r := &gbnfRender{spec: spec, parts: parts, names: names, blocks: make([]argBlock, len(names))}
	for i, n := range names {
		p := params[n]
		if t := bytes.TrimSpace(p); len(t) > 0 && !json.Valid(t) {
			return nil, fmt.Errorf("masking: parameters of tool %q are not JSON", n)
		}
		r.blocks[i] = renderArgRules(p)
	}
	return r, nil
}

func (r *gbnfRender) size() int {
	p := r.parts
	size := len(gbnfJSONRules) + 4*len(p.lead+p.open+p.mid+p.end+p.sep+p.tail) + 128
	for i, n := range r.names {
		size += len(n) + len(r.blocks[i].rules) + len(r.blocks[i].term) + 32
	}
	return size
}

func (r *gbnfRender) grammar() Grammar {
	spec, parts := r.spec, r.parts
	lazy := spec.Mode == ModeAuto
	var b strings.Builder
	b.Grow(r.size())
	b.WriteString("root ::= ")
	r.writeCalls(&b, !lazy)
	b.WriteString("\ncall ::= ")
	r.writeCall(&b, parts.open)
	g := Grammar{
		Grammar:         b.String(),
		Lazy:            lazy,
		PreservedTokens: parts.special,
	}
	if g.Lazy {
		g.Triggers = []GrammarTrigger{{Type: TriggerWord, Value: spec.Format.Trigger}}
	}
	return g
}

// writeCalls writes the sequence of calls: the format's Lead when lead is
// set, one call or, where the format has them and the spec allows, more,
// then the format's closing text.
func (r *gbnfRender) writeCalls(b *strings.Builder, lead bool) {
	parts := r.parts
	if lead && parts.lead != "" {
		writeGBNFLiteral(b, parts.lead)
		b.WriteByte(' ')
	}
	b.WriteString("call")
	if parts.multi && !r.spec.OneCall {
		if parts.sep == "" {
			b.WriteByte('+')
		} else {
			b.WriteString(" ( ")
			writeGBNFLiteral(b, parts.sep)
			b.WriteString(" call )*")
		}
	}
	if parts.tail != "" {
		b.WriteByte(' ')
		writeGBNFLiteral(b, parts.tail)
	}
}

func (r *gbnfRender) call() string {
	var b strings.Builder
	b.Grow(r.size())
	b.WriteString("root ::= ")
	r.writeCall(&b, strings.TrimPrefix(r.parts.open, r.spec.Format.Trigger))
	return b.String()
}

// writeCall writes the body of one call after open (a rule's right-hand
// side, then a newline) and every rule it needs: the tool rule pairing each
// name with its arguments, the tools' argument rules, the JSON primitives.
func (r *gbnfRender) writeCall(b *strings.Builder, open string) {
	parts := r.parts
	if open != "" {
		writeGBNFLiteral(b, open)
		b.WriteByte(' ')
	}
	b.WriteString("tool")
	if parts.end != "" {
		b.WriteByte(' ')
		writeGBNFLiteral(b, parts.end)
	}
	// The names as a radix tree, one rule per branching node: entering the tool rule
	// opens one alternative per distinct first stretch of the names, not one per name.
	// llama.cpp's grammar keeps a stack per open alternative, and accepting the token
	// that opened a flat alternation of 500 names cost 2.4–4.3 ms a call, against
	// 81–186 µs for the tree (BenchmarkGrammarDecode, names=flat and names=tree); now
	// each character narrows a handful.
	b.WriteString("\ntool ::= ")
	var prefix []byte
	if r.flatNames {
		prefix = r.writeFlatNames(b, prefix)
	} else {
		prefix = r.writeNameTree(b, prefix)
	}
	b.WriteString("\ntool-args ::= ")
	writeGBNFLiteral(b, parts.mid)
	b.WriteByte('\n')
	for i := range r.names {
		if rules := r.blocks[i].rules; rules != "" {
			prefix = argPrefix(prefix[:0], i)
			writeBlock(b, rules, prefix)
		}
	}
	b.WriteString(gbnfJSONRules)
}

// writeNameTree writes the tool rule's right-hand side and its branch rules: the names
// as a radix tree, each name paired with its tool's arguments.
func (r *gbnfRender) writeNameTree(b *strings.Builder, prefix []byte) []byte {
	root := newNameTrie(r.names)
	pending := []*nameTrie{root}
	for k := 0; k < len(pending); k++ {
		nd := pending[k]
		if k > 0 {
			b.WriteByte('\n')
			b.WriteString(nd.rule)
			b.WriteString(" ::= ")
		}
		first := true
		alt := func() {
			if !first {
				b.WriteString(" |\n  ")
			}
			first = false
		}
		if nd.tool >= 0 {
			alt()
			b.WriteString("tool-args ")
			prefix = argPrefix(prefix[:0], nd.tool)
			writeBlock(b, r.blocks[nd.tool].term, prefix)
		}
		for _, c := range nd.children {
			alt()
			// Names passed Spec validation: valid UTF-8 without quotes,
			// backslashes or control bytes, so they need no escaping.
			b.WriteByte('"')
			b.WriteString(c.label)
			b.WriteString(`" `)
			if len(c.children) == 0 {
				b.WriteString("tool-args ")
				prefix = argPrefix(prefix[:0], c.tool)
				writeBlock(b, r.blocks[c.tool].term, prefix)
				continue
			}
			c.rule = "tn" + strconv.Itoa(len(pending))
			b.WriteString(c.rule)
			pending = append(pending, c)
		}
	}
	return prefix
}

// writeFlatNames writes the tool rule's right-hand side as one alternative per name,
// each with its tool's arguments: the form the radix tree replaced, kept for
// BenchmarkGrammarDecode's comparison.
func (r *gbnfRender) writeFlatNames(b *strings.Builder, prefix []byte) []byte {
	for i, n := range r.names {
		if i > 0 {
			b.WriteString(" |\n  ")
		}
		b.WriteByte('"')
		b.WriteString(n)
		b.WriteString(`" tool-args `)
		prefix = argPrefix(prefix[:0], i)
		writeBlock(b, r.blocks[i].term, prefix)
	}
	return prefix
}

// nameTrie is a radix tree of tool names: each edge a label of whole characters, each
// node the tool that ends there (-1: none) and its children in the order their first
// name came, so that the grammar is the same bytes for the same names.
type nameTrie struct {
	label    string
	tool     int
	children []*nameTrie
	rule     string // the node's rule, once written
}

func newNameTrie(names []string) *nameTrie {
	root := &nameTrie{tool: -1}
	for i, n := range names {
		root.insert(n, i)
	}
	return root
}

func (t *nameTrie) insert(s string, tool int) {
	for {
		if s == "" {
			if t.tool < 0 {
				t.tool = tool // a repeated name keeps its first arguments
			}
			return
		}
		var next *nameTrie
		for _, c := range t.children {
			if firstRune(c.label) == firstRune(s) {
				next = c
				break
			}
		}
		if next == nil {
			t.children = append(t.children, &nameTrie{label: s, tool: tool})
			return
		}
		n := commonPrefix(next.label, s)
		if n < len(next.label) {
			// Split the edge: the shared part, then what was below it.
			below := &nameTrie{label: next.label[n:], tool: next.tool, children: next.children}
			next.label, next.tool, next.children = next.label[:n], -1, []*nameTrie{below}
		}
		t, s = next, s[n:]
	}
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// commonPrefix is the length in bytes of the longest common prefix of a and b that
// ends on a character boundary.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) {
		r1, s1 := utf8.DecodeRuneInString(a[n:])
		r2, s2 := utf8.DecodeRuneInString(b[n:])
		if r1 != r2 || s1 != s2 {
			break
		}
		n += s1
	}
	return n
}

// argPrefix is the rule-name prefix of the i-th tool's arguments: a0, a1, …
func argPrefix(dst []byte, i int) []byte {
	return strconv.AppendInt(append(dst, 'a'), int64(i), 10)
}

// writeBlock copies a tool's rules with rulePrefix replaced by prefix.
func writeBlock(b *strings.Builder, rules string, prefix []byte) {
	for {
		i := strings.IndexByte(rules, rulePrefix)
		if i < 0 {
			b.WriteString(rules)
			return
		}
		b.WriteString(rules[:i])
		b.Write(prefix)
		rules = rules[i+1:]
	}
}

// gbnfJSONRules are the JSON primitives, after llama.cpp's grammars/json.gbnf
// and common/json-schema-to-grammar.cpp, with whitespace bounded as there
// so a model cannot pad forever. Values have no trailing whitespace: the
// call's fixed closing text follows at once.
const gbnfJSONRules = `json-object ::= "{" ws ( json-string ws ":" ws json-value ws ( "," ws json-string ws ":" ws json-value ws )* )? "}"
json-value ::= json-object | json-array | json-string | json-number | json-bool | "null"
json-array ::= "[" ws ( json-value ws ( "," ws json-value ws )* )? "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x7F\x00-\x1F] | "\\" json-escape
json-escape ::= ["\\/bfnrt] | "u" [0-9a-fA-F]{4}
json-number ::= json-int ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{1,15} )?
json-int ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
json-bool ::= "true" | "false"
` + gbnfWSRule

// gbnfWSRule is the last of gbnfJSONRules, which a structural tag's
// grammar writes in another form (grammarContent).
const gbnfWSRule = `ws ::= | " " | "\n" [ \t]{0,20}
`

// writeGBNFLiteral writes s as a GBNF string literal. llama.cpp's parse_char
// knows the escapes \x \u \U \t \r \n \\ \" \[ \]; other bytes of valid UTF-8
// are taken as code points, so only the quote, the backslash and control
// characters need escaping. Invalid UTF-8 is written byte by byte as \xNN,
// which llama.cpp reads as that code point, not that byte; names never hold
// it (Spec validation), and fixed format text is ASCII.
func writeGBNFLiteral(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		case c == '\n':
			b.WriteString(`\n`)
			i++
		case c == '\r':
			b.WriteString(`\r`)
			i++
		case c == '\t':
			b.WriteString(`\t`)
			i++
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
	}
	b.WriteByte('"')
}
