package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Routing names a request's conversation to a router in front of a backend's engines
// (vLLM's production-stack router, the SGLang model gateway, llm-d's inference
// scheduler, Dynamo's frontend), so its turns reach the engine that holds its prefix.
// docs/scale-out.md says which router reads which.
type Routing struct {
	// HintHeader is the request header the hint goes in (x-user-id for vLLM's
	// production-stack router with --session-key x-user-id, for one). Empty: no hint.
	HintHeader string `yaml:"hint_header"`
	// HintValue is what names the conversation, in hint_header, session_token's memory
	// and nvext.session_control: thread (default: the request's salted thread id, so
	// each conversation keeps its engine; none for a request that names no thread) or
	// caller (a salted hash of the caller's key: all of a caller's conversations share
	// one engine). Only with one of those.
	HintValue string `yaml:"hint_value"`
	// SessionToken is a header the router answers with and expects back on the
	// conversation's next request: llm-d's session-affinity scorer's x-session-token
	// (the base64 of the pod that served it). The gateway remembers the last value per
	// conversation and sends it back. Empty: none.
	SessionToken string `yaml:"session_token"`
	// NVExt is what Chat Completions requests carry in their nvext member for NVIDIA
	// Dynamo's frontend. Zero: nothing.
	NVExt NVExt `yaml:"nvext"`
}

// NVExt is the members the gateway merges into a request's nvext object (the client's
// own members win).
type NVExt struct {
	// SessionControl writes session_control.session_id, the conversation's salted value
	// (hint_value): Dynamo 1.1 and 1.2's sticky routing.
	SessionControl bool `yaml:"session_control"`
	// SessionAction is session_control.action: bind (router-only affinity, Dynamo 1.2)
	// or empty for none. Only with session_control.
	SessionAction string `yaml:"session_action"`
	// SessionTimeout is session_control.timeout in seconds. Zero: none written
	// (Dynamo's default, 300). Only with session_control.
	SessionTimeout int `yaml:"session_timeout"`
	// Priority is agent_hints.priority (higher first; a 32-bit signed integer). Nil: none.
	Priority *int `yaml:"priority"`
	// StrictPriority is agent_hints.strict_priority (the router's queue tier; 0 to
	// 4294967295). Nil: none.
	StrictPriority *int `yaml:"strict_priority"`
	// SpeculativePrefill writes agent_hints.speculative_prefill: true.
	SpeculativePrefill bool `yaml:"speculative_prefill"`
}

// empty reports whether n writes nothing.
func (n NVExt) empty() bool {
	return n == NVExt{}
}

// nvextKinds are the kinds whose engines receive the client's Chat Completions body with
// the gateway's edits, so an nvext member reaches Dynamo's frontend.
var nvextKinds = []string{"vllm", "sglang", "openai"}

// reservedHints are headers a routing hint must not replace: the request's framing, its
// content and the upstream's credentials.
var reservedHints = []string{"authorization", "x-api-key", "content-type", "content-length",
	"host", "accept", "transfer-encoding", "connection", "traceparent", "tracestate"}

// maxSessionTimeout is Dynamo's bound on a session's timeout (a year, in seconds).
const maxSessionTimeout = 31536000

// validateRouting checks a backend's routing hints: header names (RFC 9110 tokens) that
// are not ones the request needs, a value source it knows, nvext members Dynamo accepts,
// and a backend that sends HTTP (and, for nvext, the client's body).
func (c *Config) validateRouting(file, key string, b Backend) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	r := b.Routing
	if r.HintHeader == "" && r.SessionToken == "" && !r.NVExt.SessionControl && r.HintValue != "" {
		return bad(key+".hint_value", "applies only with hint_header, session_token or nvext.session_control: name where the router reads it")
	}
	if b.Kind == "embedded" {
		for _, set := range []struct {
			k  string
			on bool
		}{{"hint_header", r.HintHeader != ""}, {"session_token", r.SessionToken != ""}, {"nvext", !r.NVExt.empty()}} {
			if set.on {
				return bad(key+"."+set.k, "kind embedded runs in this process: there is no router to send a hint to")
			}
		}
		return nil
	}
	header := func(k, v string) error {
		if !httpToken(v) {
			return bad(key+"."+k, "%q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", v)
		}
		if slices.Contains(reservedHints, strings.ToLower(v)) {
			return bad(key+"."+k, "%s is a header the request itself needs; pick the one your router reads (x-session-id, x-session-token, ...)", v)
		}
		return nil
	}
	if r.HintHeader != "" {
		if err := header("hint_header", r.HintHeader); err != nil {
			return err
		}
	}
	if r.SessionToken != "" {
		if err := header("session_token", r.SessionToken); err != nil {
			return err
		}
		if strings.EqualFold(r.SessionToken, r.HintHeader) {
			return bad(key+".session_token", "%s is hint_header too: the router's token and the gateway's hint need two headers", r.SessionToken)
		}
	}
	switch r.HintValue {
	case "", "thread", "caller":
	default:
		return bad(key+".hint_value", "must be thread or caller (or left out for thread)")
	}
	return c.validateNVExt(bad, key+".nvext", b)
}

// validateNVExt checks a backend's nvext members against the types Dynamo reads.
func (c *Config) validateNVExt(bad func(key, format string, args ...any) error, key string, b Backend) error {
	n := b.Routing.NVExt
	if n.empty() {
		return nil
	}
	if !slices.Contains(nvextKinds, b.Kind) {
		return bad(key, "kind %s does not send the client's Chat Completions body; nvext needs kind %s (Dynamo's frontend speaks OpenAI's API)", b.Kind, strings.Join(nvextKinds, ", "))
	}
	if !n.SessionControl {
		if n.SessionAction != "" {
			return bad(key+".session_action", "applies only with session_control: true")
		}
		if n.SessionTimeout != 0 {
			return bad(key+".session_timeout", "applies only with session_control: true")
		}
	}
	if n.SessionAction != "" && n.SessionAction != "bind" {
		return bad(key+".session_action", "must be bind (or left out): open and close drive an engine's session lifecycle, which the gateway does not")
	}
	if n.SessionTimeout < 0 || n.SessionTimeout > maxSessionTimeout {
		return bad(key+".session_timeout", "must be 1 to %d seconds (or left out for Dynamo's 300)", maxSessionTimeout)
	}
	if p := n.Priority; p != nil && (*p < math.MinInt32 || *p > math.MaxInt32) {
		return bad(key+".priority", "must be a 32-bit signed integer (%d to %d)", math.MinInt32, math.MaxInt32)
	}
	if p := n.StrictPriority; p != nil && (*p < 0 || *p > math.MaxUint32) {
		return bad(key+".strict_priority", "must be 0 to %d", uint32(math.MaxUint32))
	}
	return nil
}
