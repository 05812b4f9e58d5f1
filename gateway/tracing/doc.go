// Package tracing turns OpenTelemetry tracing on from the standard OTEL_* environment
// variables, and carries a request's W3C trace context to HTTP upstreams.
//
// It owns two things: FromEnv, which builds the SDK's tracer provider with an OTLP/HTTP
// exporter when the environment asks for traces and returns nil — no exporter, no
// tracer, nothing done per request — when it does not; and Transport, the
// http.RoundTripper that writes the traceparent (and tracestate) of the span in a
// request's context into its headers.
//
// It never decides what a span holds (the gateway package does) and never sends
// anything to an upstream but those headers.
package tracing
