package gateway_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
)

// Whatever logs it, in the message, an attribute, an error, a group or a logger's
// fixed attributes, neither a configured key nor a key-shaped string reaches the log;
// the rest of the line does.
func TestRedactLogs_NoLineCarriesAKey(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(gateway.RedactLogs(slog.NewJSONHandler(&buf, nil), "configured-key-123"))
	log.With("backend", "up", "auth", "Bearer configured-key-123").
		Warn("upstream said sk-live-ABCDEFGH12345678", "error", errors.New("401: key configured-key-123 refused"),
			slog.Group("req", "header", "x-api-key: configured-key-123"), "status", 401)
	out := buf.String()
	for _, secret := range []string{"configured-key-123", "sk-live-ABCDEFGH12345678"} {
		if strings.Contains(out, secret) {
			t.Errorf("log line carries %q: %s", secret, out)
		}
	}
	for _, kept := range []string{`"backend":"up"`, `"status":401`, "upstream said", "401: key [redacted] refused"} {
		if !strings.Contains(out, kept) {
			t.Errorf("log line lost %q: %s", kept, out)
		}
	}
}
