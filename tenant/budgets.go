package tenant

import "context"

// Budgets enforces keys' limits. Limiter keeps them in this process's memory (Local
// adapts it); package redislimit keeps them in Redis or Valkey, shared by every gateway
// that uses the same server, so N gateways behind a load balancer give a key its
// limits once, not N times.
//
// Admit takes one request from k's budgets. It returns a release func to call when the
// request ends (freeing its concurrency slot; calling it again does nothing), or a
// Refusal saying which limit refused and when to retry, or an error when the budgets
// could not be consulted (their store is unreachable): the caller decides what that
// means, the gateway answers 503. A nil k, or one with zero Limits, is unlimited.
//
// Charge spends n tokens (an answer's prompt and completion tokens, known once it ends)
// from k's tokens_per_minute budget; the budget may go into debt, and the key's next
// requests are refused until it refills above zero.
type Budgets interface {
	Admit(ctx context.Context, k *Key) (release func(), refused *Refusal, err error)
	Charge(ctx context.Context, k *Key, n int) error
}

// Local adapts the in-memory Limiter to Budgets. Its errors are always nil and it
// ignores the contexts: nothing it does waits.
func Local(l *Limiter) Budgets { return localBudgets{l} }

type localBudgets struct{ l *Limiter }

func (b localBudgets) Admit(_ context.Context, k *Key) (func(), *Refusal, error) {
	release, refused := b.l.Admit(k)
	return release, refused, nil
}

func (b localBudgets) Charge(_ context.Context, k *Key, n int) error {
	b.l.Charge(k, n)
	return nil
}
