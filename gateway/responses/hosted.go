package responses

// HostedTool says a Responses tool of type typ is one OpenAI runs on its side (a
// tool_search is, unless its execution is "client"): what Options.Hosted drops or
// refuses, here and on a request passed to OpenAI as it is.
func HostedTool(typ string) bool { return hostedTools[typ] || typ == "tool_search" }

// HostedItem says an input item of type typ is a hosted tool's run, dropped or refused
// with its tool.
func HostedItem(typ string) bool { return hostedItems[typ] }
