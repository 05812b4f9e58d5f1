package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// n above 1 is a 400 naming n where the gateway runs the loop (it reads one answer, and
// would merge a stream's choices), and reaches the upstream as sent where the request
// is passed; n 1 runs as before.
func TestChoices_NAboveOneRefusedInTheLoopPassedOtherwise(t *testing.T) {
	sc := &scripted{replies: []string{reasoningReply}}
	gw := managedGateway(t, sc, "")
	for _, stream := range []string{"false", "true"} {
		resp, body := postWithThread(t, gw, `{"model":"m1","n":2,"stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`, "n"+stream)
		var e struct {
			Error struct{ Param, Code string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Param != "n" {
			t.Errorf("managed, stream %s: %d %s", stream, resp.StatusCode, body)
		}
	}
	if len(sc.bodies) != 0 {
		t.Errorf("a refused request reached the upstream %d times", len(sc.bodies))
	}
	if resp, body := postWithThread(t, gw, `{"model":"m1","n":1,"messages":[{"role":"user","content":"hi"}]}`, "n1"); resp.StatusCode != http.StatusOK {
		t.Errorf("n 1: %d %s", resp.StatusCode, body)
	}

	sc = &scripted{replies: []string{reasoningReply}}
	pass := scriptedGateway(t, sc, nil)
	if resp, body := postWithThread(t, pass, `{"model":"m1","n":2,"messages":[{"role":"user","content":"hi"}]}`, "p"); resp.StatusCode != http.StatusOK {
		t.Fatalf("passed: %d %s", resp.StatusCode, body)
	}
	if len(sc.bodies) != 1 || string(sc.bodies[0]["n"]) != "2" {
		t.Errorf("the passed request's n did not reach the upstream: %v", sc.bodies)
	}
}
