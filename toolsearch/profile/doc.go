// Package profile assembles a profile's tool catalog from where its tools come from and
// keeps it stable while those sources change.
//
// # Sources and their order
//
// A profile's tools come from sources resolved in a fixed order: tool files (in the order
// listed), inline tools, MCP servers (in the order listed). The client's own tools are
// layered over the result per request by the gateway (toolsearch.Index.WithClient), last.
// A later tool with an id an earlier source already gave replaces it wholesale — its
// description, its schema, everything — and the replacement is logged.
//
// # Allowlists
//
// Spec.Allow filters the resolved tools by id (globs: '*' and '?'). A missing allowlist
// (nil) keeps every tool; an empty one (allow: []) keeps none, the safe reading of a list
// that names nothing. MCP servers have their own allowlists over their own tool names,
// applied before the tools reach this package (toolsearch/mcp).
//
// # Overrides and variants
//
// An Override changes what the model sees of one tool — its description, its parameters
// schema, or whether it is offered at all — never what the tool does. Its Variants are
// chosen per request by rules over the request's context (policy.Cond): the first variant
// whose rule holds is shallow-merged over the tool (each field it sets replaces the
// tool's). A rule that cannot be decided (metadata that is not an object of strings)
// does not hold. Every distinct choice of variants is its own catalog, with its own
// version and its own cached prefix on the engine.
//
// # Stability
//
// The first catalog renders its tools sorted by id. Update keeps every tool that stays
// where it was, appends new ones (sorted among themselves) and keeps removed ones in
// place, masked (View.Removed: not found, not loaded, not called), until Compact drops
// them: the bytes the engine has cached stay a prefix of the new catalog. A tool whose
// definition changed in place moves the prefix; Change.Broke says so.
//
// # Never
//
// It reads no files and talks to no server: sources arrive as toolsearch.Tool values.
// A Catalog is safe for concurrent use; views are immutable.
package profile
