package respstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// A response's input items come back as kept, from memory and from records (its own
// items, not its chain's); a record written without them, as earlier gateways did,
// reads as a response with none; another owner's are absent.
func TestInput_Kept(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return time.Unix(1000, 0) }
	in1 := []json.RawMessage{json.RawMessage(`{"type":"message","role":"user","content":"one"}`)}
	in2 := []json.RawMessage{json.RawMessage(`{"type":"function_call_output","call_id":"c","output":"x"}`), json.RawMessage(`{"role":"user","content":"two"}`)}
	mem := New(1<<20, time.Hour, now)
	rec := New(1<<20, time.Hour, now)
	rec.SetRecords(fileRecords(t, now), time.Hour)
	for name, st := range map[string]*Store{"memory": mem, "records": rec} {
		r1 := turn(nil, "o", "r1", msg("user", 1, 4), msg("assistant", 1, 4), nil).WithInput(in1)
		r2 := turn(r1, "o", "r2", msg("user", 2, 4), msg("assistant", 2, 4), nil).WithInput(in2)
		r3 := turn(r2, "o", "r3", msg("user", 3, 4), msg("assistant", 3, 4), nil) // no input kept
		k := st.Keeper()
		for _, r := range []struct{ r, prev *Response }{{r1, nil}, {r2, r1}, {r3, r2}} {
			if err := k.Save(ctx, r.r, r.prev); err != nil {
				t.Fatal(err)
			}
		}
		for id, want := range map[string][]json.RawMessage{"r1": in1, "r2": in2, "r3": nil} {
			got, ok, err := k.Input(ctx, "o", id)
			if err != nil || !ok || !sameMessages(got, want) {
				t.Errorf("%s %s: %s %v %v, want %s", name, id, got, ok, err, want)
			}
		}
		if _, ok, err := k.Input(ctx, "other", "r2"); ok || err != nil {
			t.Errorf("%s: another owner read r2's input: %v %v", name, ok, err)
		}
		if got, err := k.Load(ctx, "o", "r3"); err != nil || got == nil || len(got.History()) != 6 {
			t.Errorf("%s: the chain through r3: %v %v", name, got, err)
		}
	}
	// An old record, without input, decodes with none.
	data := encodeRecord(turn(nil, "o", "r1", msg("user", 1, 4), msg("assistant", 1, 4), nil), 0, 0)
	if p, err := decodeRecord(data, true); err != nil || p.input != nil {
		t.Errorf("a record without input: %+v %v", p, err)
	}
}
