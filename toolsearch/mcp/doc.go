// Package mcp is the gateway's client of MCP servers, built on the official
// Go SDK (github.com/modelcontextprotocol/go-sdk). It turns one server's
// tools into toolsearch tools and calls them.
//
// It owns, per server: the connection (a child process over stdio, or
// streamable HTTP), connecting again after the session dies, re-reading the
// tool list on notifications/tools/list_changed, naming tools
// (Name + "_" + the server's name, sanitized), the allowlist, and turning a
// call's result, or its failure, into the text the model reads.
//
// It never:
//   - passes the gateway's environment to a child process: only a minimal
//     inherited one (PATH, HOME, locale, temp dirs) plus Config.Env;
//   - sends the caller's bearer token unless Config.ForwardAuth is set, and
//     then only on that call's requests, never when connecting or listing;
//   - lets a failure escape as a panic, an error or a hang: Call always
//     returns a Result within its timeout, failures as one line with
//     IsError set;
//   - truncates silently: a result over MaxText says it was cut;
//   - sends a call twice when it may have reached the server: only a call
//     surely undelivered (the connection already closed, the HTTP session
//     gone, the connection refused) is sent once more on a new session;
//   - serves roots, sampling or elicitation to a server;
//   - decides which tools a request gets, or renders them: that is
//     toolsearch's job.
//
// Parameters are the inputSchema re-encoded from the SDK's map with sorted
// keys, so a listing gives the same bytes every time (see convert).
package mcp
