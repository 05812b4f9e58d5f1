// Package meta owns the meta-tools a model uses to find and load tools: search_tools and
// load_tool, modelled on Mastra's ToolSearchProcessor. It defines them (Definitions) and
// executes a model's call to them (Execute), returning the tool message content and the
// names to add to the thread's loaded set. The gateway decides where the content goes and
// keeps the loaded set; this package keeps no state.
//
// # Wire shapes
//
// Definitions are constant bytes: the same for every request, process and machine, so the
// meta-tools never disturb an engine's prefix cache. Arguments follow Mastra:
// search_tools({"query": "…"}) and load_tool({"toolName": "…"}), plus
// load_tool({"toolNames": ["…", "…"]}) to load several in one round. A namespace
// ("git.*", "github_*", "namespace:git") may stand for a name in load_tool and as a query
// in search_tools. Results are compact JSON with members in a fixed order:
//
//	search_tools: {"results":[{"name","description","score"}],"message"}
//	load_tool:    {"success","message","toolName"} or {…,"toolNames":[…]} for several
//	bad calls:    {"error":"…"}
//
// Scores are rounded to two decimals. Messages tell the model what to do next ("call
// load_tool with {"toolName": "X"}"), since that is the only reader who can act on them.
// With auto_load, search_tools loads what it finds and load_tool is left out of the
// definitions; a call to load_tool is still executed, for models that remember it.
//
// # Policy
//
// Env.Allowed is the filter policy's hook: tools it refuses in PhaseSearch never appear
// in results (with auto_load, neither do tools it refuses in PhaseLoad), and load_tool
// refuses tools it denies in PhaseLoad. The "active" phase belongs to whoever computes the
// loaded set for a request, not to this package.
//
// # Never
//
// Execute never panics on a model's arguments and never returns content that is not
// valid JSON; a bad call is an Outcome with Err set and a message for the model. It never
// re-encodes anything a client sent, and holds no package state.
package meta
