package gateway

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
)

// A truncatingDoor is a door whose client may let the gateway drop the oldest of the
// conversation to fit the model's context window (Responses' truncation: "auto").
type truncatingDoor interface {
	truncates() bool
}

func (d *responsesDoor) truncates() bool { return d.rq != nil && d.rq.Truncate }

// fitWindow drops the oldest messages of q, as OpenAI's truncation "auto" drops input
// items from the beginning of the conversation, until the budget guard's estimate fits
// window, when the door's client asked for it and the window is known. System and
// developer messages stay; an assistant message that made calls goes with the tool
// results that answer it, so no call is split from its output; the last turn stays, and
// a request that does not fit even so is left for the budget guard to refuse. What it
// dropped is said in a warning header.
func fitWindow(w http.ResponseWriter, log *slog.Logger, d doorway, q *request, pl *planner.Planner, window int) error {
	if t, ok := d.(truncatingDoor); !ok || !t.truncates() || window <= 0 {
		return nil
	}
	msgs := make([][]byte, len(q.env.Messages))
	for i, m := range q.env.Messages {
		msgs[i] = m
	}
	if pl.CheckBudget(window, q.env.Object, q.env.Tools, msgs) == nil {
		return nil
	}
	units := droppable(msgs)
	if len(units) < 2 {
		return nil
	}
	// Each message counted once; a unit's cost is the sum of its messages'.
	counts := make([]int, len(msgs))
	total := pl.PromptTokens(q.env.Tools, nil)
	for i, m := range msgs {
		counts[i] = pl.PromptTokens(nil, [][]byte{m})
		total += counts[i]
	}
	maxTokens := 0
	for _, key := range []string{"max_completion_tokens", "max_tokens"} {
		if raw, ok := q.env.Object.Get(key); ok {
			if n, err := strconv.Atoi(string(raw)); err == nil {
				maxTokens = n
				break
			}
		}
	}
	fits := func() bool { return total < window && (maxTokens <= 0 || total+maxTokens <= window) }
	drop := map[int]bool{}
	dropped := 0
	for _, u := range units[:len(units)-1] {
		if fits() {
			break
		}
		for _, i := range u {
			drop[i] = true
			total -= counts[i]
		}
		dropped += len(u)
	}
	kept := make([][]byte, 0, len(msgs)-len(drop))
	for i, m := range msgs {
		if !drop[i] {
			kept = append(kept, m)
		}
	}
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, m := range kept {
		if i > 0 {
			arr.WriteByte(',')
		}
		arr.Write(m)
	}
	arr.WriteByte(']')
	body, err := oai.Set(q.body, "messages", arr.Bytes())
	if err != nil {
		return err
	}
	env, err := oai.ParseEnvelope(body)
	if err != nil {
		return err
	}
	q.body, q.env = body, env
	warn(log, w, d.name(), []string{fmt.Sprintf("truncation: the %d oldest messages were dropped to fit the model's context window of %d tokens", dropped, window)})
	return nil
}

// droppable groups the indexes of msgs that truncation may drop, oldest first: each
// message but system and developer ones, an assistant message that made calls together
// with the tool messages that follow it.
func droppable(msgs [][]byte) [][]int {
	var units [][]int
	for i := 0; i < len(msgs); i++ {
		role, _ := oai.Get(msgs[i], "role")
		switch string(role) {
		case `"system"`, `"developer"`:
			continue
		case `"tool"`:
			if n := len(units); n > 0 && isCallUnit(msgs, units[n-1]) {
				units[n-1] = append(units[n-1], i)
				continue
			}
		}
		units = append(units, []int{i})
	}
	return units
}

// isCallUnit says whether unit begins with an assistant message that made calls.
func isCallUnit(msgs [][]byte, unit []int) bool {
	calls, ok := oai.Get(msgs[unit[0]], "tool_calls")
	return ok && len(calls) > 2 && calls[0] == '['
}
