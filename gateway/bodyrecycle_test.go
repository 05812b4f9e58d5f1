package gateway_test

import (
	"fmt"
	"strings"
	"testing"
)

// A request's body buffer is recycled once the request ends (in race builds, which the
// test command runs, it is poisoned instead), so what outlives a request must keep
// copies. These requests are over 4 KiB, the size from which bodies are recycled, and
// each later turn needs bytes an earlier body carried.

// The tools a Responses turn's tool_search_output loaded are stored with the response,
// and the turn that continues it still declares them, byte for byte.
func TestBodyRecycle_StoredResponseKeepsTheToolsItsTurnLoaded(t *testing.T) {
	sc := &scripted{replies: []string{textReply("Found it.", 10, 0), textReply("Ok.", 5, 0), textReply("Done.", 20, 10)}}
	gw := doorsWith(t, sc, nil)
	desc := "Deploys the named service. " + strings.Repeat("It waits for the rollout to settle. ", 150) // ~5 KB
	tool := fmt.Sprintf(`{"type":"function","name":"deploy_service","description":%q,"parameters":{"type":"object","properties":{"name":{"type":"string"}}}}`, desc)
	turn1 := `{"model":"m1","tools":[{"type":"tool_search","execution":"client"}],"input":[` +
		`{"role":"user","content":"Deploy the api."},` +
		`{"type":"tool_search_call","call_id":"ts1","execution":"client","status":"completed","arguments":{"query":"deploy"}},` +
		`{"type":"tool_search_output","call_id":"ts1","execution":"client","status":"completed","tools":[` + tool + `]}]}`
	if len(turn1) < 4<<10 {
		t.Fatalf("turn 1 is %d bytes: too small to be recycled", len(turn1))
	}
	status, _, body := call(t, gw, "POST", "/v1/responses", aliceKey, turn1)
	if status != 200 {
		t.Fatalf("turn 1: %d %s", status, body)
	}
	id := idOf(t, body)
	// Another large request in between takes the recycled buffer.
	other := `{"model":"m1","input":"` + strings.Repeat("z", 6<<10) + `"}`
	if status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, other); status != 200 {
		t.Fatalf("the request in between: %d %s", status, out)
	}
	status, _, out := call(t, gw, "POST", "/v1/responses", aliceKey, `{"model":"m1","input":"go on","previous_response_id":"`+id+`"}`)
	if status != 200 {
		t.Fatalf("turn 2: %d %s", status, out)
	}
	sent := string(sc.bodies[len(sc.bodies)-1]["tools"])
	if !strings.Contains(sent, "deploy_service") || !strings.Contains(sent, desc[:200]) || !strings.Contains(sent, desc[len(desc)-200:]) {
		t.Errorf("turn 2 lost the tool turn 1 loaded: tools %.300s", sent)
	}
}
