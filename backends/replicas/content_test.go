package replicas

import (
	"context"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// silent is a replica that cannot say what it leaves out.
type silent struct{}

func (silent) ChatCompletion(context.Context, *backends.Request) (*backends.Response, error) {
	return nil, nil
}

// noter is a replica that says it leaves out what it was told to.
type noter struct {
	silent
	notes []string
}

func (n noter) Notes(context.Context, []byte) []string { return n.notes }

// TestNotes: the replicas' notes are the first replica's that can say; none, nil.
func TestNotes(t *testing.T) {
	plain := Replica{ID: "a", Backend: silent{}}
	b, err := New(Options{Name: "p", Replicas: []Replica{plain, {ID: "b", Backend: noter{notes: []string{"x: image omitted"}}}, {ID: "c", Backend: noter{notes: []string{"other"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Notes(context.Background(), nil); len(got) != 1 || got[0] != "x: image omitted" {
		t.Errorf("notes %q, want the second replica's", got)
	}
	b, err = New(Options{Name: "p", Replicas: []Replica{plain}})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Notes(context.Background(), nil); got != nil {
		t.Errorf("notes %q from replicas that cannot say", got)
	}
}
