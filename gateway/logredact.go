package gateway

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/maskgate/maskgate/backends"
)

// RedactLogs returns a handler that passes every record to h with its message and
// attribute values through backends.Redact, secrets included (the configured keys'
// values): whoever logs an upstream's error, no log line carries a credential.
func RedactLogs(h slog.Handler, secrets ...string) slog.Handler {
	return &redactHandler{h: h, secrets: secrets}
}

type redactHandler struct {
	h       slog.Handler
	secrets []string
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, backends.Redact(rec.Message, r.secrets...), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(red), secrets: r.secrets}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name), secrets: r.secrets}
}

// attr redacts a's value: strings, errors and Stringers as their text, groups member by
// member, other values only when their text holds a secret; numbers, times and the like
// pass as they are.
func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, backends.Redact(v.String(), r.secrets...))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, m := range g {
			red[i] = r.attr(m)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, backends.Redact(x.Error(), r.secrets...))
		case fmt.Stringer:
			return slog.String(a.Key, backends.Redact(x.String(), r.secrets...))
		default: // kept as it is, unless its text holds something to redact
			if s := fmt.Sprint(x); backends.Redact(s, r.secrets...) != s {
				return slog.String(a.Key, backends.Redact(s, r.secrets...))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
