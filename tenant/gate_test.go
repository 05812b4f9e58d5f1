package tenant

import (
	"context"
	"errors"
	"testing"
)

func TestGate_QueuesUpToItsBoundThenRefusesAtOnce(t *testing.T) {
	g := NewGate(1, 2)
	release, err := g.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		release func()
		err     error
	}
	waiting := make(chan result, 2)
	for range 2 {
		go func() {
			r, err := g.Acquire(context.Background())
			waiting <- result{r, err}
		}()
	}
	for g.Queued() < 2 { // both are parked on the slot channel
		waitABit()
	}
	if _, err := g.Acquire(context.Background()); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("4th request: err %v, want ErrQueueFull", err)
	}
	release()
	first := <-waiting
	if first.err != nil {
		t.Fatal(first.err)
	}
	if g.InFlight() != 1 {
		t.Errorf("in flight %d, want 1", g.InFlight())
	}
	first.release()
	second := <-waiting
	if second.err != nil {
		t.Fatal(second.err)
	}
	second.release()
	second.release() // a second release frees nothing
	if g.InFlight() != 0 || g.Queued() != 0 {
		t.Errorf("in flight %d, queued %d; want 0, 0", g.InFlight(), g.Queued())
	}
}

func TestGate_AWaiterLeavesWithItsContextsCause(t *testing.T) {
	g := NewGate(1, 1)
	release, _ := g.Acquire(context.Background())
	defer release()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error)
	go func() {
		_, err := g.Acquire(ctx)
		done <- err
	}()
	for g.Queued() < 1 {
		waitABit()
	}
	cancel(ErrQueueTimeout) // what the gateway's queue deadline sets
	if err := <-done; !errors.Is(err, ErrQueueTimeout) {
		t.Errorf("err %v, want ErrQueueTimeout", err)
	}
	if g.Queued() != 0 {
		t.Errorf("queued %d after the waiter left", g.Queued())
	}
}

func TestGate_NoQueueRefusesWhenFull(t *testing.T) {
	g := NewGate(2, 0)
	a, _ := g.Acquire(context.Background())
	b, _ := g.Acquire(context.Background())
	if _, err := g.Acquire(context.Background()); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("err %v", err)
	}
	a()
	b()
}
