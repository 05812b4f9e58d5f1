// Package lark translates the grammars of custom tools into llama.cpp's GBNF:
// the Lark subset tool grammars use (OpenAI's Responses and Chat Completions
// custom tools take format {"type": "grammar", "syntax": "lark", ...}; Codex's
// apply_patch, exec and js_repl are written in it) and single regular
// expressions (syntax "regex").
//
// The translation keeps the language a grammar accepts and nothing else: Lark's
// tree shaping (aliases, ?rule inlining, !rule, priorities) names or orders parse
// trees and is dropped, since the engine only has to hold the text to the
// grammar. What falls outside the subset — %ignore (whitespace anywhere changes
// the language in a way a token grammar cannot follow cheaply), %declare and
// other directives, templates, imports from grammars other than common.lark,
// look-around and back-references in regular expressions, left recursion — is an
// [*Error] naming the construct, never dropped: a caller refuses the tool rather
// than let a model write text the grammar would not accept.
//
// The GBNF is read by llama.cpp's grammar loader (llama-server's grammar field,
// the embedded engine's grammar sampler) and by xgrammar as an EBNF grammar
// (vLLM and SGLang structural tags), both checked by this package's tests.
//
// It never decides where a grammar goes: masking puts it in a tool call's body.
package lark
