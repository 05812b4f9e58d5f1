package replicas

import (
	"context"
	"errors"
	"testing"
)

// windowed is a replica that says its context window, or fails to.
type windowed struct {
	silent
	n   int
	err error
}

func (w windowed) ContextTokens(context.Context) (int, error) { return w.n, w.err }

// The smallest window of the replicas that say one; an error when none does.
func TestContextTokens_SmallestOfThoseThatSay(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name     string
		replicas []Replica
		want     int
	}{
		{"all say", []Replica{{ID: "a", Backend: windowed{n: 8192}}, {ID: "b", Backend: windowed{n: 4096}}, {ID: "c", Backend: windowed{n: 16384}}}, 4096},
		{"one down, one silent", []Replica{{ID: "a", Backend: windowed{err: down}}, {ID: "b", Backend: silent{}}, {ID: "c", Backend: windowed{n: 8192}}}, 8192},
		{"none can say", []Replica{{ID: "a", Backend: silent{}}}, 0},
		{"all down", []Replica{{ID: "a", Backend: windowed{err: down}}, {ID: "b", Backend: windowed{n: 0}}}, 0},
	} {
		b, err := New(Options{Name: "p", Replicas: tc.replicas})
		if err != nil {
			t.Fatal(err)
		}
		n, err := b.ContextTokens(context.Background())
		if n != tc.want || (err == nil) != (tc.want > 0) {
			t.Errorf("%s: %d, %v; want %d", tc.name, n, err, tc.want)
		}
	}
}
