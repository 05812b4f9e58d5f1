package backends

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"
)

// A session token is the other way a router pins a conversation: it names the engine
// that served a request in a response header, and expects that value back on the
// conversation's next request. llm-d's session-affinity scorer (strategy
// encoded_endpoint_header, its default) works so with x-session-token, whose value is the
// base64 of the pod's namespace/name. The gateway puts the header's name, the
// conversation and a SessionTokens in the context of the call (WithSessionToken);
// HintTransport sends back the token remembered for the conversation and remembers the
// one each answer carries.

// SessionTokens remembers, per conversation, the last token a router answered with. It
// is bounded: at most Max conversations (if zero, DefaultSessionTokens), the least
// recently used dropped first, and a token unused for TTL (if zero, DefaultSessionTokenTTL)
// forgotten. It is memory of one gateway instance: a turn served by another instance
// goes without the token, and that instance learns it from its own answer. Safe for
// concurrent use; the zero value is ready.
type SessionTokens struct {
	Max int
	TTL time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time

	mu    sync.Mutex
	byKey map[string]*list.Element
	order list.List // front: most recently used
}

// Defaults of SessionTokens.
const (
	DefaultSessionTokens   = 65536
	DefaultSessionTokenTTL = time.Hour
	// MaxSessionToken bounds a token's length; a longer value is not remembered.
	MaxSessionToken = 1024
)

type tokenEntry struct {
	session, token string
	used           time.Time
}

func (t *SessionTokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Get returns the token remembered for session, or "" for none.
func (t *SessionTokens) Get(session string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byKey[session]
	if !ok {
		return ""
	}
	ent := e.Value.(*tokenEntry)
	now := t.now()
	if now.Sub(ent.used) > cmpDuration(t.TTL, DefaultSessionTokenTTL) {
		t.order.Remove(e)
		delete(t.byKey, session)
		return ""
	}
	ent.used = now
	t.order.MoveToFront(e)
	return ent.token
}

// Put remembers token for session. A token that is not ValidSessionToken, or an empty
// session, is ignored.
func (t *SessionTokens) Put(session, token string) {
	if session == "" || !ValidSessionToken(token) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if e, ok := t.byKey[session]; ok {
		ent := e.Value.(*tokenEntry)
		ent.token, ent.used = token, now
		t.order.MoveToFront(e)
		return
	}
	if t.byKey == nil {
		t.byKey = map[string]*list.Element{}
	}
	t.byKey[session] = t.order.PushFront(&tokenEntry{session: session, token: token, used: now})
	limit := t.Max
	if limit <= 0 {
		limit = DefaultSessionTokens
	}
	for t.order.Len() > limit {
		last := t.order.Back()
		t.order.Remove(last)
		delete(t.byKey, last.Value.(*tokenEntry).session)
	}
}

// Len returns how many conversations have a token remembered.
func (t *SessionTokens) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len()
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ValidSessionToken reports whether v, a header value a router answered with, may be
// remembered and sent back: 1 to MaxSessionToken bytes, each a visible ASCII character
// (a base64 token is; a value with a control byte, a space or a non-ASCII byte is not,
// and could not be sent as a header unchanged).
func ValidSessionToken(v string) bool {
	if v == "" || len(v) > MaxSessionToken {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

type tokenKey struct{}

type sessionToken struct {
	header, session string
	store           *SessionTokens
}

// WithSessionToken returns ctx under which the upstream requests carry header with the
// token store remembers for session, and the token each answer carries in header is
// remembered (HintTransport). An empty header or session, or a nil store, leaves ctx as
// it is.
func WithSessionToken(ctx context.Context, header, session string, store *SessionTokens) context.Context {
	if header == "" || session == "" || store == nil {
		return ctx
	}
	return context.WithValue(ctx, tokenKey{}, sessionToken{http.CanonicalHeaderKey(header), session, store})
}

func sessionTokenOf(ctx context.Context) (sessionToken, bool) {
	st, ok := ctx.Value(tokenKey{}).(sessionToken)
	return st, ok
}
