package replicas

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/maskgate/maskgate/backends"
)

// Start runs the health check in the background until ctx is done or Close is called:
// every HealthInterval each replica that can be pinged (backends.Pinger) is, and
// marked up or down by the answer. Replicas that cannot be pinged are only marked down
// by failed requests, and up again never; every engine kind the gateway builds from a
// url can be pinged. Calls after the first do nothing.
func (b *Backend) Start(ctx context.Context) {
	b.startOnce.Do(func() {
		ctx, b.stop = context.WithCancel(ctx)
		go b.healthLoop(ctx)
	})
}

// Close stops the health check and waits for it to end. It is safe to call more than
// once, and without Start.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.startOnce.Do(func() { close(b.done) }) // never started: nothing to wait for, and no Start later
		if b.stop != nil {
			b.stop()
		}
		<-b.done
	})
	return nil
}

func (b *Backend) healthLoop(ctx context.Context) {
	defer close(b.done)
	t := time.NewTicker(b.opt.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.checkAll(ctx)
		}
	}
}

// checkAll pings every replica at once and waits for the answers, marking each one.
func (b *Backend) checkAll(ctx context.Context) {
	var wg sync.WaitGroup
	for i, r := range b.opt.Replicas {
		p, ok := r.Backend.(backends.Pinger)
		if !ok {
			continue
		}
		wg.Go(func() { b.check(ctx, i, p) })
	}
	wg.Wait()
}

// check pings replica i and records the answer; it returns the ping's error.
func (b *Backend) check(ctx context.Context, i int, p backends.Pinger) error {
	pctx, cancel := context.WithTimeout(ctx, b.opt.PingTimeout)
	defer cancel()
	err := p.Ping(pctx)
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // our caller gave up: this says nothing about the replica
	case err == nil:
		if b.router.MarkUp(i) {
			b.log.Info("replica up", "replica", i, "id", b.opt.Replicas[i].ID)
		}
	default:
		if b.router.MarkDown(i) {
			b.log.Warn("replica down", "replica", i, "id", b.opt.Replicas[i].ID, "error", err)
		}
	}
	return err
}

// Ping pings every replica at once and succeeds as soon as one answers (a replica that
// cannot be pinged counts as up). Each answer also marks its replica up or down.
func (b *Backend) Ping(ctx context.Context) error {
	pingers := make([]backends.Pinger, len(b.opt.Replicas))
	for i, r := range b.opt.Replicas {
		p, ok := r.Backend.(backends.Pinger)
		if !ok {
			return nil
		}
		pingers[i] = p
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // on the first success, ends the other pings; they send to the buffer and exit
	errs := make(chan error, len(pingers))
	for i, p := range pingers {
		go func() { errs <- b.check(ctx, i, p) }()
	}
	var all []error
	for range pingers {
		err := <-errs
		if err == nil {
			return nil
		}
		all = append(all, err)
	}
	return fmt.Errorf("backend %q: no replica is up: %w", b.opt.Name, errors.Join(all...))
}

// ListModels is the union of what the replicas list, in replica order, skipping those
// that fail or cannot list; it fails only when none answers.
func (b *Backend) ListModels(ctx context.Context) ([]string, error) {
	type listed struct {
		asked bool
		ids   []string
		err   error
	}
	results := make([]listed, len(b.opt.Replicas))
	var wg sync.WaitGroup
	for i, r := range b.opt.Replicas {
		if l, ok := r.Backend.(backends.ModelLister); ok {
			wg.Go(func() {
				ids, err := l.ListModels(ctx)
				results[i] = listed{true, ids, err}
			})
		}
	}
	wg.Wait()
	var out []string
	seen := map[string]bool{}
	var errs []error
	answered := false
	for _, r := range results {
		switch {
		case !r.asked:
			continue
		case r.err != nil:
			errs = append(errs, r.err)
			continue
		}
		answered = true
		for _, id := range r.ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	switch {
	case answered:
		return out, nil
	case len(errs) == 0:
		return nil, fmt.Errorf("backend %q: no replica can list its models", b.opt.Name)
	}
	return nil, fmt.Errorf("backend %q: no replica listed its models: %w", b.opt.Name, errors.Join(errs...))
}
