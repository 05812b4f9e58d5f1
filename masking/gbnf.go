package masking

import (
	"encoding/json"
	"errors"
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
// The name rule is an alternation of exactly the allowed names, in the
// spec's order after deduplication (the order callers already keep stable:
// meta-tools, then loads in load order), so equal specs give equal bytes and
// the grammar reads like the loaded set. The arguments are any JSON object:
// params is accepted for the per-tool schema rendering to come and is not
// used yet; the gateway still validates arguments after decoding.
//
// Alternatives end lines with "|": llama.cpp ends a rule at a newline
// unless an operator or an open parenthesis carries it on.
//
// The root admits parallel calls where the format has them (Hermes: one
// newline between calls, as Hermes/Qwen templates write them; Mistral and
// DeepSeek: back to back); once the last call is closed only end of
// generation remains (llama.cpp allows EOG when the grammar is complete).
// The grammar starts at the trigger when lazy, and at the format's Lead
// otherwise. Only the built-in formats can be rendered; see FormatByName.
func GBNF(spec Spec, params map[string]json.RawMessage) (Grammar, error) {
	names, err := spec.names()
	if err != nil {
		return Grammar{}, err
	}
	parts, err := partsOf(spec.Format)
	if err != nil {
		return Grammar{}, err
	}
	if len(names) == 0 {
		return Grammar{}, ErrNoCallAllowed
	}
	return renderGBNF(spec, parts, len(names), func(i int) string { return names[i] }), nil
}

func renderGBNF(spec Spec, parts callParts, n int, name func(int) string) Grammar {
	lazy := spec.Mode == ModeAuto
	size := len(gbnfJSONRules) + 4*len(parts.lead+parts.open+parts.mid+parts.end+parts.sep+parts.tail) + 128
	for i := range n {
		size += len(name(i)) + 8
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString("root ::= ")
	if !lazy && parts.lead != "" {
		writeGBNFLiteral(&b, parts.lead)
		b.WriteByte(' ')
	}
	b.WriteString("call")
	if parts.multi {
		if parts.sep == "" {
			b.WriteByte('+')
		} else {
			b.WriteString(" ( ")
			writeGBNFLiteral(&b, parts.sep)
			b.WriteString(" call )*")
		}
	}
	if parts.tail != "" {
		b.WriteByte(' ')
		writeGBNFLiteral(&b, parts.tail)
	}
	b.WriteString("\ncall ::= ")
	writeGBNFLiteral(&b, parts.open)
	b.WriteString(" tool-name ")
	writeGBNFLiteral(&b, parts.mid)
	b.WriteString(" json-object")
	if parts.end != "" {
		b.WriteByte(' ')
		writeGBNFLiteral(&b, parts.end)
	}
	b.WriteString("\ntool-name ::= ")
	for i := range n {
		if i > 0 {
			b.WriteString(" |\n  ")
		}
		// Names passed Spec validation: valid UTF-8 without quotes,
		// backslashes or control bytes, so they need no escaping.
		b.WriteByte('"')
		b.WriteString(name(i))
		b.WriteByte('"')
	}
	b.WriteString("\n")
	b.WriteString(gbnfJSONRules)

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

// gbnfJSONRules is a generic JSON object, after llama.cpp's grammars/json.gbnf,
// with whitespace bounded as there so a model cannot pad forever. The object
// has no trailing whitespace: the call's fixed closing text follows at once.
const gbnfJSONRules = `json-object ::= "{" ws ( json-string ws ":" ws json-value ws ( "," ws json-string ws ":" ws json-value ws )* )? "}"
json-value ::= json-object | json-array | json-string | json-number | "true" | "false" | "null"
json-array ::= "[" ws ( json-value ws ( "," ws json-value ws )* )? "]"
json-string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
json-number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{1,15} )?
ws ::= | " " | "\n" [ \t]{0,20}
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
