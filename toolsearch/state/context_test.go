package state

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// msgs splits a JSON array of messages into raw messages.
func msgs(t testing.TB, s string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test messages: %v", err)
	}
	return out
}

const (
	user      = `{"role":"user","content":"hi"}`
	loadA     = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"a\"}"}}]}`
	loadAOK   = `{"role":"tool","tool_call_id":"c1","content":"loaded a"}`
	loadBC    = `{"role":"assistant","tool_calls":[{"id":"c2","type":"function","function":{"name":"load_tool","arguments":"{\"toolNames\":[\"b\",\"c\",\"a\"]}"}}]}`
	loadBCOK  = `{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"ok"}]}`
	searchX   = `{"role":"assistant","tool_calls":[{"id":"s1","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"mail\"}"}}]}`
	searchXOK = `{"role":"tool","tool_call_id":"s1","content":"{\"results\":[{\"name\":\"send_email\",\"score\":0.9},{\"name\":\"read_email\",\"score\":0.5}]}"}`
)

func TestFromMessages(t *testing.T) {
	tests := []struct {
		name     string
		messages string
		autoLoad bool
		want     []string
	}{
		{"no meta-tools", `[` + user + `]`, false, nil},
		{"load_tool with its result loads", `[` + user + `,` + loadA + `,` + loadAOK + `]`, false, []string{"a"}},
		{"toolNames array, first-load order", `[` + loadA + `,` + loadAOK + `,` + loadBC + `,` + loadBCOK + `]`, false, []string{"a", "b", "c"}},
		{"order is the results' order", `[` + loadBC + `,` + loadA + `,` + loadAOK + `,` + loadBCOK + `]`, false, []string{"a", "b", "c"}},
		{"a call without its result loads nothing", `[` + user + `,` + loadA + `]`, false, nil},
		{"a result whose call left the history loads nothing", `[` + user + `,` + loadAOK + `,` + loadBC + `,` + loadBCOK + `]`, false, []string{"b", "c", "a"}},
		{"an error result loads nothing", `[` + loadA + `,{"role":"tool","tool_call_id":"c1","content":"Error: tool a is not in the catalog"}]`, false, nil},
		{"an error object loads nothing", `[` + loadA + `,{"role":"tool","tool_call_id":"c1","content":"{\"error\":\"refused by policy\"}"}]`, false, nil},
		{"error false is not an error", `[` + loadA + `,{"role":"tool","tool_call_id":"c1","content":"{\"error\":false}"}]`, false, []string{"a"}},
		{"a reported loaded list wins over the arguments", `[` + loadBC + `,{"role":"tool","tool_call_id":"c2","content":"{\"loaded\":[\"c\"],\"refused\":[\"b\"]}"}]`, false, []string{"c"}},
		{"meta's result names what loaded, namespaces expanded", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":"{\"toolName\":\"git.*\"}"}}]},{"role":"tool","tool_call_id":"c","content":"{\"success\":true,\"message\":\"Loaded\",\"toolNames\":[\"git.commit\",\"git.push\"]}"}]`, false, []string{"git.commit", "git.push"}},
		{"meta's partial load", `[` + loadBC + `,{"role":"tool","tool_call_id":"c2","content":"{\"success\":false,\"message\":\"Tool b does not exist\",\"toolNames\":[\"c\",\"a\"]}"}]`, false, []string{"c", "a"}},
		{"meta's failed load names none", `[` + loadBC + `,{"role":"tool","tool_call_id":"c2","content":"{\"success\":false,\"message\":\"nothing\"}"}]`, false, nil},
		{"meta's single toolName", `[` + loadA + `,{"role":"tool","tool_call_id":"c1","content":"{\"success\":true,\"message\":\"ok\",\"toolName\":\"a\"}"}]`, false, []string{"a"}},
		{"both toolName and toolNames", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":"{\"toolName\":\"x\",\"toolNames\":[\"y\"]}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]`, false, []string{"x", "y"}},
		{"arguments as an object", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":{"toolName":"x"}}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]`, false, []string{"x"}},
		{"toolNames as a lone string", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":"{\"toolNames\":\"x\"}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]`, false, []string{"x"}},
		{"non-string names are skipped", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":"{\"toolNames\":[1,\"x\",null,\"\"]}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]`, false, []string{"x"}},
		{"malformed arguments are ignored", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":"{\"toolName\":"}}]},{"role":"tool","tool_call_id":"c","content":"ok"},` + loadA + `,` + loadAOK + `]`, false, []string{"a"}},
		{"malformed messages are skipped", `[42,"x",{"role":7},` + loadA + `,{"role":"tool","tool_call_id":1},` + loadAOK + `]`, false, []string{"a"}},
		{"one result per call", `[` + loadA + `,{"role":"tool","tool_call_id":"c1","content":"Error: no"},` + loadAOK + `]`, false, nil},
		{"other tools do not load", `[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"get_weather","arguments":"{\"toolName\":\"a\"}"}}]},` + loadAOK + `]`, false, nil},
		{"search results do not load without auto_load", `[` + searchX + `,` + searchXOK + `]`, false, nil},
		{"auto_load: search results load", `[` + searchX + `,` + searchXOK + `,` + loadA + `,` + loadAOK + `]`, true, []string{"send_email", "read_email", "a"}},
		{"auto_load: a top-level array of results", `[` + searchX + `,{"role":"tool","tool_call_id":"s1","content":"[{\"name\":\"x\"},{\"nom\":\"y\"}]"}]`, true, []string{"x"}},
		{"auto_load: a search result that left the history", `[` + searchXOK + `]`, true, nil},
		{"auto_load: a failed search loads nothing", `[` + searchX + `,{"role":"tool","tool_call_id":"s1","content":"error: index unavailable"}]`, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromMessages(msgs(t, tt.messages), tt.autoLoad)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("loaded (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzFromMessages(f *testing.F) {
	for _, s := range []string{
		`[` + user + `,` + loadA + `,` + loadAOK + `]`,
		`[` + loadBC + `,` + loadBCOK + `]`,
		`[` + searchX + `,` + searchXOK + `]`,
		`[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"load_tool","arguments":{"toolNames":"x"}}}]},{"role":"tool","tool_call_id":"c","content":"{\"loaded\":[1]}"}]`,
		`{"role":"tool"}`, `[`, `[null]`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, autoLoad bool) {
		var messages []json.RawMessage
		if json.Unmarshal(data, &messages) != nil {
			messages = []json.RawMessage{data} // one arbitrary message
		}
		got := FromMessages(messages, autoLoad)
		seen := map[string]bool{}
		for _, n := range got {
			if n == "" || seen[n] {
				t.Fatalf("result %q has an empty or repeated name", got)
			}
			seen[n] = true
		}
		if again := FromMessages(messages, autoLoad); !cmp.Equal(got, again) {
			t.Fatalf("two runs differ: %q then %q", got, again)
		}
		if !autoLoad {
			// auto_load only adds: every tool loaded without it is loaded with it.
			with := map[string]bool{}
			for _, n := range FromMessages(messages, true) {
				with[n] = true
			}
			for _, n := range got {
				if !with[n] {
					t.Fatalf("%q loaded without auto_load but not with it", n)
				}
			}
		}
	})
}
