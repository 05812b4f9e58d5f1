package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is the service.name of the gateway's spans unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES names another.
const ServiceName = "maskgate"

// Setup is tracing as the environment configured it. A nil *Setup is tracing off.
type Setup struct {
	provider *sdktrace.TracerProvider
	// Endpoint says where spans go, for the start log.
	Endpoint string
}

// Provider is the tracer provider, or nil when tracing is off (the gateway then makes
// no spans at all).
func (s *Setup) Provider() trace.TracerProvider {
	if s == nil {
		return nil
	}
	return s.provider
}

// Shutdown sends the spans still batched and stops the exporter, within ctx.
func (s *Setup) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.provider.Shutdown(ctx)
}

// FromEnv turns tracing on when the environment asks for it, by the OpenTelemetry
// specification's variables:
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off;
//   - OTEL_TRACES_EXPORTER=otlp, or OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set: on, exporting over OTLP/HTTP;
//   - none of them set: off (where the specification's default would export to
//     localhost:4318, a gateway nobody asked to trace sends nothing).
//
// When on, the exporter reads the rest of OTEL_EXPORTER_OTLP_* (endpoint, headers,
// timeout, compression, certificates, protocol http/protobuf or http/json; grpc is
// refused: this build has the HTTP exporter only), the SDK OTEL_TRACES_SAMPLER(_ARG) and
// OTEL_BSP_*, and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Other
// exporters than otlp are refused, naming those supported. getenv reads the variables
// that decide and the endpoint (OTEL_EXPORTER_OTLP_ENDPOINT is a base URL that gets
// /v1/traces, the traces one a whole URL); the exporter and SDK read the rest from the
// process environment themselves.
func FromEnv(ctx context.Context, getenv func(string) string) (*Setup, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	switch strings.ToLower(exporter) {
	case "none":
		return nil, nil
	case "":
		if endpoint == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: this gateway exports traces over OTLP/HTTP only; set it to otlp (or none)", exporter)
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if p := strings.ToLower(strings.TrimSpace(protocol)); p != "" && p != "http/protobuf" && p != "http/json" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: this gateway exports traces over OTLP/HTTP; use http/protobuf or http/json", protocol)
	}
	var opts []otlptracehttp.Option
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u)) // the traces URL, as it is
	} else if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(u, "/")+"/v1/traces")) // a base URL
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(ServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if endpoint == "" {
		endpoint = "https://localhost:4318 (the OTLP default)"
	}
	return &Setup{provider: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), Endpoint: endpoint}, nil
}

// ShutdownTimeout bounds the flush of the spans still batched at exit.
const ShutdownTimeout = 5 * time.Second

// Close is Shutdown within ShutdownTimeout, for a deferred call at exit.
func (s *Setup) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	return s.Shutdown(ctx)
}

// Transport returns next with the W3C trace context of each request's span (its
// context's) written into the request's headers, traceparent and tracestate: the engine,
// or a proxy before it, continues the gateway's trace. A request without a span goes as
// it is.
func Transport(next http.RoundTripper) http.RoundTripper {
	return &propagating{next: next}
}

type propagating struct {
	next http.RoundTripper
}

var w3c = propagation.TraceContext{}

func (p *propagating) RoundTrip(r *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return p.next.RoundTrip(r)
	}
	// A RoundTripper must not change the caller's request: headers go on a copy.
	r2 := r.Clone(r.Context())
	w3c.Inject(r.Context(), propagation.HeaderCarrier(r2.Header))
	return p.next.RoundTrip(r2)
}

// CloseIdleConnections passes on to the wrapped transport (http.Client calls it).
func (p *propagating) CloseIdleConnections() {
	if c, ok := p.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
