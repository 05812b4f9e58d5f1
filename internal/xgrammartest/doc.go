// Package xgrammartest checks structural tags with the real xgrammar, for Go
// tests: the npm package @mlc-ai/web-xgrammar (pinned in testdata/node, its
// version in package-lock.json), which is xgrammar's C++ core built to
// WASM, run by Node.js through testdata/node/check.mjs.
//
// One [Run] is one node process for any number of cases: each case's tag
// is compiled with Grammar.fromStructuralTag, each output is checked whole
// with Testings.isGrammarAcceptString (accepted only if the grammar can end
// there), and token walks over a small raw vocabulary go through a
// GrammarMatcher, whose bitmask after the walk is reported. [Check] asserts
// outputs the caller marked as to be accepted or refused and counts them
// per kind.
//
// It owns running xgrammar and nothing about tool calls: callers write the
// outputs and their verdicts from their own knowledge of a wire format,
// never from the tag under test. It must never skip: without Node.js or the
// package it fails with the command that fixes it ([nodetest.Node]).
package xgrammartest
