package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFromEnv_OffUnlessAsked: no variable, OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none
// is tracing off: no provider at all.
func TestFromEnv_OffUnlessAsked(t *testing.T) {
	for _, m := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "gw"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
	} {
		s, err := FromEnv(context.Background(), env(m))
		if s != nil || err != nil || s.Provider() != nil || s.Close() != nil {
			t.Errorf("%v: %v, %v", m, s, err)
		}
	}
}

// TestFromEnv_RefusesWhatItCannotDo: another exporter or the gRPC protocol is an error
// that names what works.
func TestFromEnv_RefusesWhatItCannotDo(t *testing.T) {
	for m, want := range map[*map[string]string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"}:                                                             "otlp",
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}:                        "http/protobuf",
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}: "http/protobuf",
	} {
		if _, err := FromEnv(context.Background(), env(*m)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want an error naming %s", *m, err, want)
		}
	}
}

// collectorServer is an OTLP/HTTP receiver that keeps the span names it gets, by path.
type collectorServer struct {
	*httptest.Server
	mu    sync.Mutex
	spans map[string][]string
	svc   []string
}

func newCollector(t *testing.T) *collectorServer {
	c := &collectorServer{spans: map[string][]string{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collector.ExportTraceServiceRequest
		if r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &req) != nil {
			t.Errorf("the exporter sent %s %q", r.Header.Get("Content-Type"), b)
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					c.svc = append(c.svc, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans[r.URL.Path] = append(c.spans[r.URL.Path], s.Name)
				}
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.Close)
	return c
}

// TestFromEnv_ExportsOverOTLPHTTP: the generic endpoint is a base URL (/v1/traces is
// added), the traces one is used as it is; spans batched are sent at Close; the service
// is maskgate unless OTEL_SERVICE_NAME says otherwise (read by the SDK from the process
// environment).
func TestFromEnv_ExportsOverOTLPHTTP(t *testing.T) {
	c := newCollector(t)
	for _, tc := range []struct {
		m    map[string]string
		path string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}, "/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": c.URL + "/custom/path", "OTEL_TRACES_EXPORTER": "otlp"}, "/custom/path"},
	} {
		s, err := FromEnv(context.Background(), env(tc.m))
		if err != nil || s == nil {
			t.Fatalf("%v: %v", tc.m, err)
		}
		_, span := s.Provider().Tracer("test").Start(context.Background(), "chat m1")
		span.End()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		got := c.spans[tc.path]
		c.mu.Unlock()
		if len(got) != 1 || got[0] != "chat m1" {
			t.Errorf("%v: the collector got %v at %s (all: %v)", tc.m, got, tc.path, c.spans)
		}
	}
	if len(c.svc) == 0 || c.svc[0] != ServiceName {
		t.Errorf("service.name %v", c.svc)
	}
}

// TestTransport_InjectsTheSpansContext: a request made under a span carries its
// traceparent, on a copy (the caller's request is left as it was); one without goes as
// it is.
func TestTransport_InjectsTheSpansContext(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
	}))
	defer up.Close()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")
	defer span.End()
	hc := &http.Client{Transport: Transport(http.DefaultTransport)}
	for _, c := range []context.Context{ctx, context.Background()} {
		req, _ := http.NewRequestWithContext(c, http.MethodGet, up.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("traceparent") != "" {
			t.Errorf("the caller's request was changed")
		}
	}
	sc := span.SpanContext()
	if len(got) != 2 || got[0] != "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01" || got[1] != "" {
		t.Errorf("traceparents %q", got)
	}
	hc.CloseIdleConnections() // passes through
}
