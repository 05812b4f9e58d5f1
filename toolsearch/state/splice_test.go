package state

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

func TestAnchorOf_IgnoresWhitespaceOnly(t *testing.T) {
	a := AnchorOf(json.RawMessage(`{"role":"user","content":"hi"}`))
	if b := AnchorOf(json.RawMessage("{ \"role\": \"user\",\n \"content\": \"hi\" }")); b != a {
		t.Errorf("re-indented message: %s, want %s", b, a)
	}
	if c := AnchorOf(json.RawMessage(`{"role":"user","content":"hi!"}`)); c == a {
		t.Error("a message with other content has the same anchor")
	}
	if len(a) != 32 {
		t.Errorf("anchor %q: want 32 hex digits", a)
	}
}

// Each case is a history the client rewrote after the gateway kept a splice that
// followed "u2" (the second of four messages).
func TestPlace_FollowsTheAnchorThroughRewrites(t *testing.T) {
	u1, u2, a2, u3 := `{"role":"user","content":"one"}`, `{"role":"user","content":"two"}`, `{"role":"assistant","content":"ok"}`, `{"role":"user","content":"three"}`
	sum := `{"role":"user","content":"summary of one"}`
	sp := Splice{After: 2, Anchor: AnchorOf(json.RawMessage(u2))}
	for _, c := range []struct {
		name   string
		client []json.RawMessage
		want   int
	}{
		{"unchanged", raws(u1, u2, a2, u3), 2},
		{"earlier message removed", raws(u2, a2, u3), 1},
		{"earlier messages summarised into more", raws(sum, sum, sum, u2, a2, u3), 4},
		{"anchor re-indented", raws(u1, "{ \"role\": \"user\", \"content\": \"two\" }", a2, u3), 2},
		{"anchor summarised away", raws(sum, a2, u3), -1},
		{"history rewound before the anchor", raws(u1), -1},
		{"anchor repeated: the one at its place wins", raws(u2, u2, a2), 2},
		{"anchor repeated later only", raws(u1, a2, u3, u2), 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Place(c.client, []Splice{sp}); !cmp.Equal(got, []int{c.want}) {
				t.Errorf("placed at %v, want [%d]", got, c.want)
			}
		})
	}
}

func TestPlace_UnanchoredSplicesGoByPosition(t *testing.T) {
	client := raws(`{"a":1}`, `{"b":2}`)
	got := Place(client, []Splice{{After: 0}, {After: 2}, {After: 3}, {After: -1}})
	if want := []int{0, 2, -1, -1}; !cmp.Equal(got, want) {
		t.Errorf("placed at %v, want %v", got, want)
	}
}

func FuzzPlace(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte(`{"b":2}`), 1, true)
	f.Fuzz(func(t *testing.T, m1, m2 []byte, after int, anchored bool) {
		client := []json.RawMessage{m1, m2, m1}
		sp := Splice{After: after}
		if anchored {
			sp.Anchor = AnchorOf(m2)
		}
		at := Place(client, []Splice{sp})[0]
		switch {
		case at == -1:
		case at < 0 || at > len(client):
			t.Fatalf("placed at %d of %d messages", at, len(client))
		case anchored && AnchorOf(client[at-1]) != sp.Anchor:
			t.Fatalf("placed after a message that is not its anchor")
		}
	})
}
