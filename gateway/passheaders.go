package gateway

import (
	"net/http"
	"strings"
)

// DefaultBetaFlags are the OpenAI-Beta and Anthropic-Beta flags a request passed to an
// upstream that speaks its door may carry when Options.BetaFlags is nil: those that
// change how the model answers or what it reports, never what it may reach on the
// operator's account. Left out: files-api-*, mcp-client-*, code-execution-*, skills-*,
// advisor-tool-*, fast-mode-* (billed higher), oauth-*, and any not listed.
var DefaultBetaFlags = []string{
	// OpenAI-Beta on /v1/responses (Codex and others send the first).
	"responses=experimental", "responses=v1",
	// Anthropic-Beta.
	"prompt-caching-2024-07-31", "pdfs-2024-09-25", "token-counting-2024-11-01",
	"token-efficient-tools-2025-02-19", "output-128k-2025-02-19", "interleaved-thinking-2025-05-14",
	"fine-grained-tool-streaming-2025-05-14", "extended-cache-ttl-2025-04-11", "context-1m-2025-08-07",
	"context-management-2025-06-27", "model-context-window-exceeded-2025-08-26",
	"computer-use-2024-10-22", "computer-use-2025-01-24", "claude-code-20250219",
}

// betaFlags splits the values of a beta header into its flags: comma-separated, spaces
// around each trimmed, empty ones skipped.
func betaFlags(values []string) []string {
	var out []string
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// filterBeta is the flags of values that allowed lists, joined with commas ("" when
// none), and those it does not.
func filterBeta(values []string, allowed map[string]bool) (kept string, refused []string) {
	var ok []string
	for _, f := range betaFlags(values) {
		if allowed[f] {
			ok = append(ok, f)
		} else {
			refused = append(refused, f)
		}
	}
	return strings.Join(ok, ","), refused
}

// passBeta is the beta header name of h as the upstream may see it: the allowed flags
// only. A flag not allowed is left out, with a warning, or under hosted_tools: refuse a
// 400 naming it.
func passBeta(h http.Header, name string, allowed map[string]bool, e *passEdit, out http.Header) error {
	kept, refused := filterBeta(h.Values(name), allowed)
	if len(refused) > 0 {
		if e.refuse {
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "beta_not_allowed",
				Message: "the " + name + " flag " + quote(refused[0]) + " is not one this gateway passes (doors.beta_flags); leave it out"}
		}
		for _, f := range refused {
			e.warnings = append(e.warnings, name+" flag "+quote(f)+" left out: not in doors.beta_flags")
		}
	}
	if kept != "" {
		out.Set(name, kept)
	}
	return nil
}

// passedResponseHeaders are the upstream's response headers a passed request's client
// gets: what its SDK reads, nothing about the operator's account (organization,
// project, rate limits, cookies).
var passedResponseHeaders = []string{"Content-Type", "X-Request-Id", "Request-Id", "Openai-Processing-Ms", "Openai-Version", "Retry-After"}

// copyPassedHeaders copies the allowed headers of an upstream's answer to dst; its
// X-Request-Id under HeaderUpstreamRequestID, as copyHeaders does.
func copyPassedHeaders(dst, src http.Header) {
	for _, k := range passedResponseHeaders {
		vs := src.Values(k)
		if len(vs) == 0 {
			continue
		}
		if k == HeaderRequestID {
			k = HeaderUpstreamRequestID
		}
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}
