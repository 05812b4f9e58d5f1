package backends

import (
	"context"
	"net/http"
)

// A routing hint is one request header the gateway sends upstream so that a router in
// front of the engines (a session-affinity router: vLLM's production-stack router, the
// SGLang model gateway, llm-d's inference scheduler, Dynamo's frontend) keeps a
// conversation on the engine that holds its prefix in cache. The gateway puts it in the
// context of the call (WithRoutingHint); HintTransport, the upstream transport, writes it
// on every request made under that context, whichever backend builds the request.

type hintKey struct{}

type hint struct{ name, value string }

// WithRoutingHint returns ctx carrying the header name: value for the upstream requests
// made under it. An empty name or value leaves ctx as it is.
func WithRoutingHint(ctx context.Context, name, value string) context.Context {
	if name == "" || value == "" {
		return ctx
	}
	return context.WithValue(ctx, hintKey{}, hint{http.CanonicalHeaderKey(name), value})
}

// RoutingHint returns the header a context carries (WithRoutingHint); ok is false when
// it carries none.
func RoutingHint(ctx context.Context) (name, value string, ok bool) {
	h, ok := ctx.Value(hintKey{}).(hint)
	return h.name, h.value, ok
}

// HintTransport returns next with the routing hint of each request's context set as a
// header on the request (a copy: a RoundTripper must not modify its request), and the
// session token of its context (WithSessionToken) sent and remembered. A request whose
// context carries neither goes as it is. If next is nil, http.DefaultTransport is
// used.
func HintTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return hintTransport{next}
}

type hintTransport struct{ next http.RoundTripper }

func (t hintTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name, value, hinted := RoutingHint(req.Context())
	st, tokened := sessionTokenOf(req.Context())
	if !hinted && !tokened {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	if hinted {
		req.Header.Set(name, value)
	}
	if tokened {
		if tok := st.store.Get(st.session); tok != "" {
			req.Header.Set(st.header, tok)
		}
	}
	resp, err := t.next.RoundTrip(req)
	if tokened && err == nil {
		st.store.Put(st.session, resp.Header.Get(st.header))
	}
	return resp, err
}
