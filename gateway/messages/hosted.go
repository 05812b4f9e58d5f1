package messages

// ServerTool says a tool of type typ ("" when it has none) is one of Anthropic's server
// tools (or its own client tools), which Options.Hosted drops or refuses: anything but
// a custom tool.
func ServerTool(typ string) bool { return typ != "" && typ != "custom" }

// ServerBlock says a content block of type typ is one a server tool left in the
// conversation, dropped or refused with its tool.
func ServerBlock(typ string) bool { return isServerBlock(typ) }
