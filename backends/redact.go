package backends

import (
	"net/http"
	"regexp"
	"strings"
)

// redacted replaces what Redact removes.
const redacted = "[redacted]"

// Patterns of credentials as upstream error messages echo them: provider keys
// (OpenAI and Anthropic sk-…, Google AIza…, GitHub gh?_…, AWS AKIA…), bearer tokens,
// and the value of a name=value or "name": "value" pair whose name says key, token,
// secret or password. Compiled once; never written.
var (
	keyShaped  = regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})`)
	bearer     = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}`)
	namedValue = regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?key|token|secret|password|authorization)["']?\s*[:=]\s*["']?(?:(?:bearer|basic)\s+)?)([^\s"',;}&)]{6,})`)
)

// Redact returns msg with anything that looks like a credential, and every non-empty
// value of secrets, replaced by "[redacted]". Upstream error messages pass through it
// before they reach the client or a log: some echo the key they refused.
func Redact(msg string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	msg = keyShaped.ReplaceAllString(msg, redacted)
	msg = bearer.ReplaceAllString(msg, "$1 "+redacted)
	return namedValue.ReplaceAllString(msg, "${1}"+redacted)
}

// Credentials returns the credential values a request carries (Authorization without
// its scheme, x-api-key, api-key), for Redact.
func Credentials(h http.Header) []string {
	var out []string
	if v := h.Get("Authorization"); v != "" {
		if _, tok, ok := strings.Cut(v, " "); ok {
			v = tok
		}
		out = append(out, strings.TrimSpace(v))
	}
	for _, k := range []string{"X-Api-Key", "Api-Key"} {
		if v := h.Get(k); v != "" {
			out = append(out, v)
		}
	}
	return out
}
