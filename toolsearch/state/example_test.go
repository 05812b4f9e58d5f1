package state_test

import (
	"encoding/json"
	"fmt"

	"github.com/maskgate/maskgate/toolsearch/state"
)

func ExampleMemory() {
	m := state.NewMemory(state.Options{}) // TTL 1h, 64 MiB
	body := []byte(`{"model":"m","metadata":{"thread_id":"t-42"},"messages":[{"role":"user","content":"hi"}]}`)
	in, _ := state.ReadThreadInput(body)
	in.Identity = "alice" // the name of the key the gateway authenticated
	thread := state.Threads{Secret: []byte("per-process secret")}.Thread(in)

	m.Load(thread, "github_create_issue")
	m.Load(thread, "slack_post", "github_create_issue")
	s, _ := m.Get(thread)
	fmt.Println(s.Loaded)
	// Output: [github_create_issue slack_post]
}

func ExampleFromMessages() {
	messages := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"file a bug"}`),
		json.RawMessage(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"github_create_issue\"}"}}]}`),
		json.RawMessage(`{"role":"tool","tool_call_id":"c1","content":"loaded"}`),
	}
	fmt.Println(state.FromMessages(messages, false))
	fmt.Println(state.FromMessages(messages[2:], false)) // the call left the history
	// Output:
	// [github_create_issue]
	// []
}
