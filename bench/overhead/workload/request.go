package workload

import (
	"bytes"
	"fmt"
)

// Model is the model every request names; a gateway under test routes it to Upstream.
const Model = "bench-model"

// Typical tool counts: a coding or assistant request, and a client that sends its whole
// catalog.
const (
	FewTools  = 4
	ManyTools = 500
)

// Request returns a chat completion request with the given number of tools: a system
// prompt, a user turn, an assistant tool call, its result and a follow-up question. The
// first FewTools tools are hand-written; more are generated, about 620 bytes (roughly 150
// tokens) each. With FewTools the body is about 2 KB; with ManyTools about 300 KB.
//
// "model" and, for a stream, "stream":true are the first members, which is what lets
// Upstream tell the two apart without parsing the body. A stream request does not set
// stream_options, as most SDKs send it.
func Request(tools int, stream bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"` + Model + `",`)
	if stream {
		b.WriteString(`"stream":true,`)
	}
	b.WriteString(`"messages":[`)
	b.WriteString(conversation)
	b.WriteString(`],"tools":[`)
	for i := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < len(handwritten) {
			b.WriteString(handwritten[i])
		} else {
			writeGenerated(&b, i)
		}
	}
	b.WriteString(`],"tool_choice":"auto","temperature":0.2,"max_tokens":512}`)
	return b.Bytes()
}

const conversation = `{"role":"system","content":"You are a careful assistant for an operations team. Use the tools when a question needs live data; answer from what the tools return and say so when they return nothing. Keep answers short, give units, and never invent identifiers."},` +
	`{"role":"user","content":"What's the weather in Lyon tomorrow, and is there anything on my calendar that would be outdoors?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_8f2a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\",\"day\":\"tomorrow\",\"units\":\"metric\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_8f2a","content":"{\"city\":\"Lyon\",\"forecast\":\"light rain until 11:00, then cloudy\",\"high_c\":17,\"low_c\":9,\"wind_kmh\":14}"},` +
	`{"role":"user","content":"Thanks. Check the calendar too, please."}`

var handwritten = []string{
	`{"type":"function","function":{"name":"get_weather","description":"Get the weather forecast for a city on a given day.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Lyon"},"day":{"type":"string","description":"today, tomorrow, or an ISO date"},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city"]}}}`,
	`{"type":"function","function":{"name":"list_calendar_events","description":"List the user's calendar events between two times.","parameters":{"type":"object","properties":{"start":{"type":"string","description":"ISO 8601 start time"},"end":{"type":"string","description":"ISO 8601 end time"},"calendar":{"type":"string","description":"Calendar id; the primary calendar if omitted"}},"required":["start","end"]}}}`,
	`{"type":"function","function":{"name":"search_web","description":"Search the web and return the top results with titles, URLs and snippets.","parameters":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","minimum":1,"maximum":20}},"required":["query"]}}}`,
	`{"type":"function","function":{"name":"send_email","description":"Send an email from the user's account.","parameters":{"type":"object","properties":{"to":{"type":"array","items":{"type":"string"}},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject","body"]}}}`,
}

var (
	domains = []string{"crm", "billing", "inventory", "tickets", "deploy", "metrics", "docs", "hr"}
	verbs   = []string{"lookup", "list", "update", "create", "archive", "export", "summarize"}
)

// writeGenerated writes tool i of a large catalog.
func writeGenerated(b *bytes.Buffer, i int) {
	d, v := domains[i%len(domains)], verbs[i%len(verbs)]
	fmt.Fprintf(b, `{"type":"function","function":{"name":"%s_%s_%03d",`, d, v, i)
	fmt.Fprintf(b, `"description":"%s records in the %s system (tool %d). Use it when the user asks about %s data that is not already in the conversation.",`, v, d, i, d)
	fmt.Fprintf(b, `"parameters":{"type":"object","properties":{`+
		`"%s_id":{"type":"string","description":"Identifier of the %s record in %s"},`+
		`"region":{"type":"string","enum":["emea","amer","apac"],"description":"Data region to query"},`+
		`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"Maximum records to return"},`+
		`"include_archived":{"type":"boolean","description":"Also return archived records"}},`+
		`"required":["%s_id"]}}}`, d, d, d, d)
}
