// Package masking turns a loaded tool set into constraints on what a model may
// decode, while the prompt keeps the whole catalog byte-stable.
//
// It owns the positional token mask used by the embedded engine: given the
// model's vocabulary (token id → decoded bytes), a tool-call wire format, the
// allowed names and a mode, a compiled [Mask] answers, at every decoding step
// of a [State], which token ids may be sampled. Free text is unconstrained;
// after the trigger only token paths that keep the emitted bytes on the fixed
// text and on a prefix of some allowed name are allowed, and the name's
// closer only after a complete allowed name. Tokens that straddle those
// boundaries (`"name": "get` or `file",`) are handled because the mask is
// computed by walking each token's bytes through the same byte automaton that
// [State.Accept] uses; a format's markers may also come as one special token.
//
// Formats ([FormatByName], [FormatNames], [DetectFormat] from a chat
// template), each with the bytes of one call and its trigger:
//
//	hermes    <tool_call>\n{"name": "A", "arguments": {…}}\n</tool_call>   trigger <tool_call>
//	llama3    {"name": "A", "parameters": {…}}                             trigger {"name": " (text)
//	mistral   [TOOL_CALLS]A[ARGS]{…}                                       trigger [TOOL_CALLS]
//	harmony   <|channel|>commentary to=functions.A <|constrain|>json<|message|>{…}<|call|>
//	                                                                       trigger to=functions.
//	deepseek  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>A<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
//	                                                                       trigger <｜tool▁call▁begin｜>
//
// A trigger is the shortest text before every call's name in every variant
// the model emits (harmony's recipient may sit in the role or the channel;
// only DeepSeek's first call has <｜tool▁calls▁begin｜>), so a lazy
// constraint cannot be bypassed; what precedes it in a required call is the
// format's Lead. Formats without a reliable end marker leave the arguments
// as free text, and every later trigger is constrained again.
//
// It also renders the same constraint for engines that take it as text: a
// llama.cpp GBNF grammar with lazy triggers ([GBNF]), a vLLM/SGLang structural
// tag ([StructuralTag]) for every built-in format, and OpenAI's allowed_tools
// ([AllowedTools], format-free); Ollama format schemas and the tools-array
// reduction live with their backend and the gateway. Masks are cached per
// (vocabulary, format, allowed set, mode) by [Cache]; a catalog precompiled
// there ([Cache.Precompile]) turns a new allowed set of its names into a
// mask derived from the nearest one cached, not a compile.
//
// Cost. A [Catalog] holds the per-catalog work (compacted schemas, escaped
// and checked names, each tool's arguments rules and structural tag entry
// once rendered) once per catalog version; rendering a loaded subset then
// copies bytes. With all 10,000 tools of a catalog loaded and ~150-token
// schemas, a structural tag is 8.2 MB (9.8 MB as vLLM's JSON string) and a
// grammar 13 MB (1.3 KB of rules per tool; names alone were 276 KB);
// go test -bench Build ./masking reports, per size, the first build (cold),
// the per-call functions, a render from a built catalog (miss) and, for
// masks, a Cache hit and the precompiled paths. At 10,000 tools on a shared
// 2-core machine (load 1.5–3): structural tag 1.3 ms appending into a reused
// buffer (1.5 ms as a string; 3.7–4.1 ms into a fresh one, whose pages fault
// in) against ~55 ms per call without a catalog; Compile 12–15 ms, and with
// the catalog precompiled (14–16 ms, once) 0.9–1.4 ms for a new allowed set
// and 0.25–0.5 ms for a loaded set grown by one tool; a Cache hit 0.13 ms.
// Under heavier load (load average 10–14) GBNF took 1.9 s cold (the schemas
// rendered once per catalog version) and ~0.1–0.2 s per miss (13 ms at
// 1,000 tools, 3.6 ms at 100), AllowedTools ~2.8 ms. A grammar holds only the allowed tools, so under mask it is the
// meta-tools and the loaded set, not the catalog.
//
// It must never ban tokens by name alone: biasing every token of a disabled
// name to −∞ also bans those tokens inside allowed names that share them
// (`get_`, `file`) and in ordinary text. Every constraint here is positional —
// active only inside the name field after the trigger — and exact: a token is
// allowed if and only if [State.Accept] accepts it. It never edits the prompt,
// never reads configuration or environment, and holds no package-level state.
//
// # Arguments
//
// GBNF pairs each allowed name with its own arguments rule, rendered from
// the tool's parameters (JSON Schema, read member by member in the client's
// byte order, never through a Go map, so equal schema bytes give equal
// grammar bytes); CallGBNF is the same call from just after the trigger, for
// the embedded engine, which finds the trigger with the token mask and then
// runs llama.cpp's grammar sampler over the call. [Catalog] renders each
// tool's rules once, on first use. The structural tag carries the schemas
// themselves (xgrammar reads them). In the token mask alone the arguments
// are free text; only the end marker, where the format has one, is tracked
// there to return to free text.
//
// The renderer follows llama.cpp's common/json-schema-to-grammar.cpp in
// what it expresses and how it lays objects out:
//
//   - type (a name or a list; nullable: true adds null); a schema without
//     type takes object from properties or a restricting
//     additionalProperties, array from items or prefixItems, and otherwise
//     admits any value; the empty schema and true admit any value;
//   - object: properties in the schema's order, the required ones first and
//     always present, then any in-order subset of the optional ones, then
//     extra keys where additionalProperties is true or a schema (extra keys
//     never repeat a declared one as a model writes it); a required name
//     the properties lack is a required member of any value. Extra keys are
//     refused when the schema has "properties" and additionalProperties is
//     absent or false, as llama.cpp and OpenAI's strict mode read it (JSON
//     Schema would allow them when it is absent); patternProperties lets any
//     extra key through;
//   - array: items, minItems, maxItems, prefixItems (each prefix item
//     present as minItems requires; items or additionalItems, or false, for
//     the rest);
//   - string: minLength and maxLength in characters (an escape is one, so
//     a surrogate pair written as two escapes counts two);
//     integer, number, boolean, null;
//   - enum and const of any JSON value, written as in the schema (compacted;
//     strings as a model writes them), enum values of another type than
//     "type" left out;
//   - anyOf and oneOf as alternatives (oneOf's "exactly one" is not
//     expressed); allOf with one member and nothing else that types the
//     value is that member (pydantic's wrapper), otherwise allOf is dropped;
//   - $ref to "#" and "#/…" pointers ($defs, definitions, anything in the
//     document), each rendered once, so recursive schemas are recursive
//     rules; a cycle that consumes no character (a $ref to itself, anyOf
//     alternatives that refer back) admits any value there, since llama.cpp
//     refuses left recursion.
//
// Everything else falls back to the widest rule for that subschema, never
// narrower than the schema: pattern, format, numeric bounds, multipleOf,
// minProperties, maxProperties, uniqueItems, contains, not, if/then/else,
// dependentSchemas, remote or anchor $refs, siblings of $ref, anyOf and
// oneOf; boolean false and unsatisfiable schemas admit any value. Counted
// repetitions above 256 are left unbounded (and larger minimums lowered to
// 256), since llama.cpp expands x{0,n} into n rules. Nesting deeper than
// 64 admits any value. Values are written in one form each, as models write
// them: whitespace is the bounded ws rule (nothing, one space, or a newline
// and up to 20 spaces or tabs) between tokens, numbers have at most 16
// integer digits, integers no fraction or exponent, members the order
// above. So a grammar never refuses a value the schema admits in that form,
// and may admit what the schema refuses only where a keyword is not
// expressed. Nothing checks arguments after decoding but the client: the
// gateway checks tool names only.
//
// # Answers
//
// A structured output (response_format json_schema or json_object) is an
// [Answer]: the same renderer over the answer's schema, but strict, since
// the answer's grammar is its only check: each keyword the list above
// widens (and a constraining keyword the chosen rendering drops beside
// $ref, const, enum, anyOf or a lone allOf, a count above 256, a schema
// without type that implies none) is a [SchemaError] naming it, never a
// wider grammar. Some keywords are rendered for answers only: a string's
// pattern anchored at both ends (^…$, JSON Schema's pattern being a search),
// translated by masking/lark's regex reading into the string's JSON form, with
// no minLength, maxLength or x-grammar beside it (any other pattern is
// refused); the lower bounds a grammar spells without arithmetic, an integer
// of at least 0 or 1 (minimum, exclusiveMinimum) and a number of at least 0
// (any other bound, and every upper bound, is refused).
// [Answer.GBNF] holds the whole output to the schema;
// [Catalog.GBNFOrAnswer] is the calls GBNF allows or the answer, one root,
// never lazy (the choice is made at the first token). The structural tag
// does not carry an answer: vLLM and SGLang read response_format
// themselves.
//
// # Custom tools
//
// A custom tool (the Responses API's {"type": "custom", "format": {"type":
// "grammar", "syntax": "lark" | "regex", "definition": …}}, Codex's
// apply_patch) takes raw text, not JSON. Its call still travels as JSON in
// every format, {"input": "TEXT"} where the format's arguments go: the
// model's chat template writes and renders every call that way (Hermes'
// <tool_call>{"name": …, "arguments": {…}}, Llama 3's parameters, Mistral's
// [ARGS], harmony's <|constrain|>json, DeepSeek's tool▁sep), so the call
// parses unambiguously with the parsers every format already has, history
// renders as the model wrote it, and no template needs a raw form it was
// never trained on. What holds the text to its language is the grammar: the
// door gives the input string the schema keyword x-grammar ([GrammarKeyword])
// with the format, and the renderer writes that string as a quote, the
// language in its JSON-string form (masking/lark's JSONStringGBNF: the quote
// and backslash as \" and \\, \b \f \n \r \t, other control characters and
// DEL as \u00XX, everything else as itself) and a quote. Decoding the
// string gives a text of the language, and only those. In the structural
// tag such a tool's content is {"type": "grammar", "grammar": …}: the same
// arguments rules as GBNF (xgrammar reads llama.cpp's GBNF; its JSON Schema
// reading would drop the keyword). A format the translation refuses leaves
// the plain string (the Responses door refuses such a tool with a 400
// first). The token mask alone (outside a call's grammar) does not see it.
package masking
