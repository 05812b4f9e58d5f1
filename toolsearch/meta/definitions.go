package meta

import (
	"strings"

	"github.com/maskgate/maskgate/backends/oai"
)

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

// definitionsNote ends a load's message under strategy index, where the result carries
// the definitions.
const definitionsNote = "Their definitions are in tools."

// indexHeading introduces the catalog's index in the meta-tool that loads (strategy index).
const indexHeading = "\n\nThe tools you can load, by namespace (name: what it does):\n"

// IndexDefinitions returns the meta-tools as Definitions does, with the catalog's index
// (toolsearch.Catalog.IndexText) at the end of the description of the meta-tool that
// loads: load_tool's, or search_tools' when autoLoad is set. The bytes depend only on
// autoLoad and index.
func IndexDefinitions(autoLoad bool, index string) []byte {
	def := loadToolDef
	if autoLoad {
		def = searchToolsAutoDef
	}
	text := oai.AppendString(nil, indexHeading+index)
	// The description is the first "description" string of def; its closing quote is
	// where the index goes.
	i := strings.Index(def, `"description":"`) + len(`"description":"`)
	end := i + closingQuote(def[i:])
	with := def[:end] + string(text[1:len(text)-1]) + def[end:]
	if autoLoad {
		return []byte(`[` + with + `]`)
	}
	return []byte(`[` + searchToolsDef + `,` + with + `]`)
}

// closingQuote is the offset of the first unescaped '"' in s.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(s)
}

// Definitions returns the meta-tools as an OpenAI "tools" array: search_tools then
// load_tool, or search_tools alone (described as loading its results) when autoLoad is
// set. The bytes are constant for each value of autoLoad; the slice is the caller's.
func Definitions(autoLoad bool) []byte {
	if autoLoad {
		return []byte(definitionsAutoLoad)
	}
	return []byte(definitions)
}
