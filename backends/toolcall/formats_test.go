package toolcall

import "testing"

func TestLlama3_Calls(t *testing.T) {
	checkCases(t, Llama3, []parseCase{
		{"plain text", "The weather is fine.", flat{Text: "The weather is fine."}},
		{"the whole output is the call", `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
			flat{Calls: []string{`get_weather {"city": "Paris"}`}}},
		{"leading whitespace and a type member", "\n {\"type\": \"function\", \"name\": \"a\", \"parameters\": {}}",
			flat{Calls: []string{"a {}"}}},
		{"after python_tag", `<|python_tag|>{"name": "a", "parameters": {"q": "x"}}`, flat{Calls: []string{`a {"q": "x"}`}}},
		{"python_tag after text", "Let me look.\n<|python_tag|>{\"name\": \"a\", \"parameters\": {}}",
			flat{Text: "Let me look.", Calls: []string{"a {}"}}},
		{"arguments read too", `{"name": "a", "arguments": {"k": [1]}}`, flat{Calls: []string{`a {"k": [1]}`}}},
		{"calls separated by semicolons", `{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {"y": "}"}}`,
			flat{Calls: []string{`a {"x": 1}`, `b {"y": "}"}`}}},
		{"calls separated by a newline", "{\"name\": \"a\", \"parameters\": {}}\n{\"name\": \"b\", \"parameters\": {}}\n",
			flat{Calls: []string{"a {}", "b {}"}}},
		{"text after a call stays", `{"name": "a", "parameters": {}}; that is all`,
			flat{Text: "; that is all", Calls: []string{"a {}"}}},
		{"JSON that is not a call is text", `{"answer": 42}`, flat{Text: `{"answer": 42}`}},
		{"a call after text, as masking's grammar lets it start", "Let me check.\n{\"name\": \"a\", \"parameters\": {\"x\": 1}}",
			flat{Text: "Let me check.", Calls: []string{`a {"x": 1}`}}},
		{"JSON with a name but no parameters after text is text", `Use {"name": "Ann"} here`, flat{Text: `Use {"name": "Ann"} here`}},
		{"other JSON after text is text", `Result: {"name":"a","parameters":{}}`, flat{Text: `Result: {"name":"a","parameters":{}}`}},
		{"a broken object after text is text", `ok {"name": "a", "parameters": {`, flat{Text: `ok {"name": "a", "parameters": {`}},
		{"an unfinished object is text", `{"name": "a", "parameters": {`, flat{Text: `{"name": "a", "parameters": {`}},
		{"invalid JSON is text", `{"name": "a", "parameters": {]}`, flat{Text: `{"name": "a", "parameters": {]}`}},
		{"a built-in call is text", `<|python_tag|>brave_search.call(query="x")`, flat{Text: `<|python_tag|>brave_search.call(query="x")`}},
		{"a broken second call is text", `{"name": "a", "parameters": {}}; {"oops": 1}`,
			flat{Text: `; {"oops": 1}`, Calls: []string{"a {}"}}},
	})
}

func TestMistral_Calls(t *testing.T) {
	checkCases(t, Mistral, []parseCase{
		{"plain text", "Bonjour [INST] x", flat{Text: "Bonjour [INST] x"}},
		{"v11 call", `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`, flat{Calls: []string{`get_weather {"city": "Paris"}`}}},
		{"v11 calls repeated", `[TOOL_CALLS]a[ARGS]{"x": 1}[TOOL_CALLS]b.c[ARGS]{}`, flat{Calls: []string{`a {"x": 1}`, "b.c {}"}}},
		{"text before the call", "Sure.\n[TOOL_CALLS]a[ARGS]{}", flat{Text: "Sure.", Calls: []string{"a {}"}}},
		{"call id before the arguments", `[TOOL_CALLS]a[CALL_ID]abc123XYZ[ARGS]{"q": 2}`, flat{Calls: []string{`a {"q": 2}`}}},
		{"old JSON array", `[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}, "id": "abcdefghi"}]`,
			flat{Calls: []string{`a {"x": 1}`, "b {}"}}},
		{"text after a call stays", `[TOOL_CALLS]a[ARGS]{"s": "}"} done`, flat{Text: " done", Calls: []string{`a {"s": "}"}`}}},
		{"no [ARGS] is text", `[TOOL_CALLS]a{"x": 1}`, flat{Text: `[TOOL_CALLS]a{"x": 1}`}},
		{"a name with spaces is text", `[TOOL_CALLS]get weather[ARGS]{}`, flat{Text: `[TOOL_CALLS]get weather[ARGS]{}`}},
		{"unfinished arguments are text", `[TOOL_CALLS]a[ARGS]{"x": `, flat{Text: `[TOOL_CALLS]a[ARGS]{"x": `}},
		{"a bad array element makes the array text", `[TOOL_CALLS][{"name": "a"}, {"arguments": {}}]`,
			flat{Text: `[TOOL_CALLS][{"name": "a"}, {"arguments": {}}]`}},
		{"a marker alone is text", "[TOOL_CALLS]", flat{Text: "[TOOL_CALLS]"}},
	})
}

func TestHarmony_Calls(t *testing.T) {
	checkCases(t, Harmony, []parseCase{
		{"final answer", "<|channel|>final<|message|>Hello!<|return|>", flat{Text: "Hello!"}},
		{"analysis is reasoning", "<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>",
			flat{Reasoning: "User greets.", Text: "Hi."}},
		{"call in the channel", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
			flat{Reasoning: "Need weather.", Calls: []string{`get_weather {"city": "Paris"}`}}},
		{"call with the recipient in the role", " to=functions.a<|channel|>commentary json<|message|>{\"x\": 1}<|call|>",
			flat{Calls: []string{`a {"x": 1}`}}},
		{"call after <|start|> with the recipient in the role", "<|start|>assistant to=functions.a<|channel|>commentary <|constrain|>json<|message|>{}<|call|>",
			flat{Calls: []string{"a {}"}}},
		{"call without <|call|> at the end", "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{\"q\": [1]}",
			flat{Calls: []string{`a {"q": [1]}`}}},
		{"preamble then call", "<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.a<|message|>{}<|call|>",
			flat{Text: "Checking.", Calls: []string{"a {}"}}},
		{"two calls", "<|channel|>commentary to=functions.a<|message|>{}<|call|><|start|>assistant<|channel|>commentary to=functions.b<|message|>{\"y\": 2}<|call|>",
			flat{Calls: []string{"a {}", `b {"y": 2}`}}},
		{"bad JSON is text", "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{oops<|call|>",
			flat{Text: "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{oops<|call|>"}},
		{"a built-in recipient is text", "<|channel|>analysis to=browser.search<|message|>{}<|call|>",
			flat{Text: "<|channel|>analysis to=browser.search<|message|>{}<|call|>"}},
		{"plain text without structure", "Just text.", flat{Text: "Just text."}},
		{"text that starts like a recipient", "tomorrow", flat{Text: "tomorrow"}},
		{"an unfinished header is text", "<|channel|>final", flat{Text: "<|channel|>final"}},
		{"a header broken by <|end|> is text", "<|channel|>final<|end|>ok", flat{Text: "<|channel|>final<|end|>ok"}},
		{"final without its end", "<|channel|>final<|message|>Partial answer", flat{Text: "Partial answer"}},
	})
}

func TestDeepSeek_Calls(t *testing.T) {
	const (
		begin = "<｜tool▁calls▁begin｜>"
		call  = "<｜tool▁call▁begin｜>"
		sep   = "<｜tool▁sep｜>"
		end   = "<｜tool▁call▁end｜>"
		ends  = "<｜tool▁calls▁end｜>"
	)
	checkCases(t, DeepSeek, []parseCase{
		{"plain text", "Hello <｜ there", flat{Text: "Hello <｜ there"}},
		{"V3.1 call", begin + call + "get_weather" + sep + `{"city": "Paris"}` + end + ends,
			flat{Calls: []string{`get_weather {"city": "Paris"}`}}},
		{"V3.1 calls with text before", "Let me see.\n\n" + begin + call + "a" + sep + `{"x": 1}` + end + call + "b" + sep + "{}" + end + ends,
			flat{Text: "Let me see.", Calls: []string{`a {"x": 1}`, "b {}"}}},
		{"V3 call", begin + call + "function" + sep + "get_weather\n```json\n{\"city\": \"Paris\"}\n```" + end + "\n" + call + "function" + sep + "b\n```json\n{}\n```" + end + ends,
			flat{Calls: []string{`get_weather {"city": "Paris"}`, "b {}"}}},
		{"text after the block stays", begin + call + "a" + sep + "{}" + end + ends + " Done.", flat{Text: " Done.", Calls: []string{"a {}"}}},
		{"unclosed block at the end", begin + call + "a" + sep + "{}", flat{Calls: []string{"a {}"}}},
		{"bad JSON is text", begin + call + "a" + sep + "{x" + end + ends, flat{Text: begin + call + "a" + sep + "{x" + end + ends}},
		{"V3 without its fence is text", begin + call + "function" + sep + "a\n{}" + end, flat{Text: begin + call + "function" + sep + "a\n{}" + end}},
		{"a block with no call is text", begin + "oops", flat{Text: begin + "oops"}},
		{"a bad second call is text", begin + call + "a" + sep + "{}" + end + call + "b" + end + ends,
			flat{Text: call + "b" + end + ends, Calls: []string{"a {}"}}},
	})
}
