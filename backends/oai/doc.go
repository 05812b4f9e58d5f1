// Package oai holds the OpenAI chat completions wire types and the byte-level editing of
// request bodies.
//
// Two rules shape it. Types here are for reading what a client sent and for writing what a
// translator generates; a client's own request is never re-marshalled from them, because a
// round trip through Go values reorders and reformats bytes and the engine's prefix cache
// is keyed on exact bytes. Edits to a client's body go through Edit, which replaces,
// inserts or deletes one top-level member and leaves every other byte where it was.
package oai
