package meta

// Names of the meta-tools.
const (
	SearchTools = "search_tools"
	LoadTool    = "load_tool"
)

// IsMeta reports whether name is a meta-tool's.
func IsMeta(name string) bool { return name == SearchTools || name == LoadTool }

// The definitions, as OpenAI tool objects rendered the way toolsearch renders a catalog
// (compact, members in a fixed order). They are constants: changing one byte changes
// every prompt's prefix, so the golden test holds them.
const (
	searchToolsDef = `{"type":"function","function":{"name":"search_tools",` +
		`"description":"Search the available tools by keywords. Use it when you need a capability that none of your tools has. ` +
		`Returns the names, short descriptions and relevance scores (0 to 1) of the best matches. ` +
		`Then call load_tool with the exact name of the tool you want, and call that tool directly.",` +
		`"parameters":{"type":"object","properties":{"query":{"type":"string","description":` +
		`"Keywords for what the tool should do, e.g. \"create github issue\", \"send email\", \"query database\"; or a namespace such as \"git.*\" to list all its tools."}},` +
		`"required":["query"]}}}`

	searchToolsAutoDef = `{"type":"function","function":{"name":"search_tools",` +
		`"description":"Search the available tools by keywords. Use it when you need a capability that none of your tools has. ` +
		`Returns the names, short descriptions and relevance scores (0 to 1) of the best matches, ` +
		`and loads them: you can call the tools it returns directly.",` +
		`"parameters":{"type":"object","properties":{"query":{"type":"string","description":` +
		`"Keywords for what the tool should do, e.g. \"create github issue\", \"send email\", \"query database\"; or a namespace such as \"git.*\" to load all its tools."}},` +
		`"required":["query"]}}}`

	loadToolDef = `{"type":"function","function":{"name":"load_tool",` +
		`"description":"Load tools found with search_tools so that you can call them directly. ` +
		`Give toolName for one tool or toolNames for several, with exact names from the search results; ` +
		`a namespace such as \"git.*\" loads all its tools.",` +
		`"parameters":{"type":"object","properties":{` +
		`"toolName":{"type":"string","description":"The exact name of the tool to load, from the search results."},` +
		`"toolNames":{"type":"array","items":{"type":"string"},"description":"The exact names of several tools to load."}}}}}`

	definitions         = `[` + searchToolsDef + `,` + loadToolDef + `]`
	definitionsAutoLoad = `[` + searchToolsAutoDef + `]`
)

// Definitions returns the meta-tools as an OpenAI "tools" array: search_tools then
// load_tool, or search_tools alone (described as loading its results) when autoLoad is
// set. The bytes are constant for each value of autoLoad; the slice is the caller's.
func Definitions(autoLoad bool) []byte {
	if autoLoad {
		return []byte(definitionsAutoLoad)
	}
	return []byte(definitions)
}
