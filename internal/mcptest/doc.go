// Package mcptest is a small MCP server, written with the official Go SDK,
// for other packages' tests. Only tests import it.
//
// It serves over stdio, as a re-exec of the test binary itself
// (ServeIfChild in TestMain, StdioCommand for the command line), and over
// streamable HTTP on 127.0.0.1 (HTTP). Both serve the same tools (Tools
// lists their names):
//
//	echo      returns its "text" argument
//	add       returns a+b as text
//	sleep     sleeps "ms" milliseconds (or until cancelled), then answers "slept"
//	fail      returns isError true with the text "failed on purpose"
//	rpc_error answers with a JSON-RPC error, -32000 "rpc error on purpose"
//	big       returns "n" bytes of text (the digits 0-9 repeated)
//	crash     over stdio, the server process exits with status 3 mid-call;
//	          over HTTP (where that would kill the test) it returns isError
//	auth      returns the Authorization header of its own HTTP request, or
//	          "(none)"; over stdio always "(none)"
//	add_tool  adds a tool named by its "name" argument, which echoes its
//	          "text" argument; clients are sent notifications/tools/list_changed
//
// Fixture tools (AddFixtures; in the stdio child, MASKGATE_MCPTEST_FIXTURES=N)
// make a catalog of an agent's size: 64 noun_verb tools (calendar_list, …,
// playlist_export) that do nothing but return their text argument.
//
// It holds no package-level state beyond the environment variables that mark
// the child process, MASKGATE_MCPTEST_SERVER, and ask it for fixtures.
package mcptest
