package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/planner"
)

// Spans, when Options.TracerProvider is set (cmd/gateway sets it from the OTEL_*
// environment; gateway/tracing). Without one no span is made and nothing here costs
// more than a nil check.
//
//	chat {model}            server: the request, from arrival to its last byte
//	  maskgate.round        one round of the loop (its upstream call and the tools
//	                        the gateway ran after it)
//	    chat {model}        client: the upstream call, until its answer was read
//	    execute_tool {name} one per tool the gateway ran after that call: an MCP tool
//	                        of the profile's, or search_tools / load_tool
//
// A request relayed byte for byte has no round: its upstream call is the request's
// child. Attributes follow the OpenTelemetry GenAI semantic conventions (semconv
// v1.41.0, the latest Go package that has them: gen_ai.operation.name,
// gen_ai.request.model, gen_ai.response.model, gen_ai.usage.input_tokens,
// gen_ai.usage.output_tokens, gen_ai.usage.cache_read.input_tokens; for a tool run
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type) plus maskgate's own below. No
// prompt, message, argument or tool result goes into a span.

// TracerName is the instrumentation scope of the gateway's spans.
const TracerName = "github.com/maskgate/maskgate/gateway"

// Attributes of maskgate's own.
const (
	AttrStrategy       = attribute.Key("maskgate.strategy")
	AttrCatalogVersion = attribute.Key("maskgate.catalog.version")
	AttrDoor           = attribute.Key("maskgate.door")
	AttrBackend        = attribute.Key("maskgate.backend")
	AttrProfile        = attribute.Key("maskgate.profile")
	AttrReplica        = attribute.Key("maskgate.replica")
	AttrThread         = attribute.Key("maskgate.thread")
	AttrCacheMiss      = attribute.Key("maskgate.cache.miss")
	AttrCacheSource    = attribute.Key("maskgate.cache.source")
	AttrComputedTokens = attribute.Key("maskgate.usage.computed_input_tokens")
	AttrRequestID      = attribute.Key("maskgate.request_id")
	AttrRound          = attribute.Key("maskgate.round")
	AttrRounds         = attribute.Key("maskgate.rounds")
	AttrToolCalls      = attribute.Key("maskgate.round.tool_calls") // the names the model called, never arguments
)

// startSpan starts x's request span, continuing the client's trace when it sent a
// traceparent, and returns r with it in its context.
func (s *Server) startSpan(r *http.Request, x *exchange) *http.Request {
	if s.tracer == nil {
		return r
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, x.ops.span = s.tracer.Start(ctx, "chat", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(x.start),
		trace.WithAttributes(semconv.GenAIOperationNameChat, AttrDoor.String(x.door), AttrRequestID.String(x.id)))
	// The tool loop runs tools with the request alone (toolloop.go); this is how their
	// spans find the round they belong to.
	ctx = context.WithValue(ctx, watchedKey{}, &x.ops)
	return r.WithContext(ctx)
}

// roundBegin counts an upstream call of x and returns the context it runs under: with
// tracing, in a new round span (n, from 0; n < 0 for a relayed request, which has
// none) and its upstream call's span, after ending the previous round's.
func (s *Server) roundBegin(ctx context.Context, x *exchange, p *planner.Plan, n int) context.Context {
	w := &x.ops
	w.rounds++
	s.noteLoaded(x, p)
	if w.span == nil {
		return ctx
	}
	s.roundEnd(x)
	if n >= 0 {
		ctx, w.round = s.tracer.Start(ctx, "maskgate.round", trace.WithAttributes(AttrRound.Int(n)))
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, AttrBackend.String(x.backend), semconv.GenAIRequestStream(x.stream)}
	if w.reqModel != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(w.reqModel))
	}
	ctx, w.upstream = s.tracer.Start(ctx, spanName(w.reqModel), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx
}

// roundRead notes an upstream answer the loop has read: its usage for the request log
// and, with tracing, its span's attributes, which it ends.
func (s *Server) roundRead(x *exchange, rd *round) {
	w := &x.ops
	w.noteRound(rd.usage)
	if rd.model != "" {
		w.respModel = rd.model
	}
	if w.span == nil {
		return
	}
	if sp := w.upstream; sp != nil {
		attrs := []attribute.KeyValue{AttrStrategy.String(string(x.strategy))}
		if rd.model != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(rd.model))
		}
		if rd.finish != "" {
			attrs = append(attrs, semconv.GenAIResponseFinishReasons(rd.finish))
		}
		if x.replica != "" {
			attrs = append(attrs, AttrReplica.String(x.replica))
		}
		sp.SetAttributes(append(attrs, usageAttrs(rd.usage)...)...)
		sp.End()
		w.upstream = nil
	}
	if w.round != nil && len(rd.calls) > 0 {
		names := make([]string, 0, len(rd.calls))
		for _, c := range rd.toolCalls() {
			names = append(names, c.Function.Name)
		}
		w.round.SetAttributes(AttrToolCalls.StringSlice(names))
	}
}

// roundEnd ends the round's spans still open: a failure marks them.
func (s *Server) roundEnd(x *exchange) {
	w := &x.ops
	if sp := w.upstream; sp != nil {
		if x.usage != nil && w.round == nil { // a relayed answer: its usage is the request's
			sp.SetAttributes(usageAttrs(x.usage)...)
		}
		markFailed(sp, x)
		sp.End()
		w.upstream = nil
	}
	if sp := w.round; sp != nil {
		markFailed(sp, x)
		sp.End()
		w.round = nil
	}
}

// watchedKey carries a traced request's *watched in its context.
type watchedKey struct{}

// toolContext is ctx, when the request is traced, with its current round span as the
// span that tool runs are children of. The loop runs tools between a round's upstream
// call and the next round, while that round is open.
func (s *Server) toolContext(ctx context.Context) context.Context {
	if s.tracer == nil {
		return ctx
	}
	if w, _ := ctx.Value(watchedKey{}).(*watched); w != nil && w.round != nil {
		return trace.ContextWithSpan(ctx, w.round)
	}
	return ctx
}

// Tool types (gen_ai.tool.type): the GenAI conventions call a tool the agent's side
// runs an extension, and one that retrieves data for the model a datastore.
const (
	toolTypeExtension = "extension" // a profile's MCP tool the gateway runs
	toolTypeDatastore = "datastore" // search_tools and load_tool, over the catalog
)

// toolSpan starts the span of one tool run under ctx (from toolContext), named and
// attributed as the GenAI conventions' execute_tool; nil when tracing is off. Its
// arguments and result stay out of it.
func (s *Server) toolSpan(ctx context.Context, c oai.ToolCall, typ string) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	name := c.Function.Name
	return s.tracer.Start(ctx, "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name),
			semconv.GenAIToolCallID(c.ID), semconv.GenAIToolType(typ)))
}

// Error types (error.type) of a failed tool run.
const (
	toolErrFailed    = "tool_error"    // the tool, or its server, answered with an error
	toolErrTimeout   = "timeout"       // the request's deadline passed during the run
	toolErrCancelled = "cancelled"     // the request was cancelled (its client left) during the run
	toolErrCut       = "arguments_cut" // the call was cut by max_tokens: nothing ran
)

// endToolSpan ends a tool run's span; errType, when not empty, marks it failed. The
// description is the error type's, never the tool's message: that is its result.
func endToolSpan(ctx context.Context, sp trace.Span, errType string) {
	if sp == nil {
		return
	}
	if errType == toolErrFailed {
		// A run cut short by the request's end reads as the tool's failure to the runner.
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			errType = toolErrTimeout
		case ctx.Err() != nil:
			errType = toolErrCancelled
		}
	}
	if errType != "" {
		sp.SetAttributes(semconv.ErrorTypeKey.String(errType))
		sp.SetStatus(codes.Error, errType)
	}
	sp.End()
}

// endSpan ends x's request span with what the request did (rec).
func (s *Server) endSpan(x *exchange, rec *RequestRecord) {
	sp := x.ops.span
	if sp == nil {
		return
	}
	s.roundEnd(x)
	sp.SetName(spanName(rec.Model))
	attrs := []attribute.KeyValue{AttrStrategy.String(rec.Strategy), AttrBackend.String(rec.Backend),
		semconv.HTTPResponseStatusCode(rec.Status), semconv.GenAIRequestStream(rec.Stream), AttrRounds.Int(rec.Rounds)}
	if rec.Model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(rec.Model))
	}
	if x.ops.respModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(x.ops.respModel))
	}
	for _, a := range []struct {
		k attribute.Key
		v string
	}{{AttrProfile, rec.Profile}, {AttrReplica, rec.Replica}, {AttrThread, rec.Thread},
		{AttrCatalogVersion, rec.CatalogVersion}, {AttrCacheMiss, rec.Miss}, {AttrCacheSource, rec.CacheSource}} {
		if a.v != "" {
			attrs = append(attrs, a.k.String(a.v))
		}
	}
	if rec.PromptTokens != nil {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(*rec.PromptTokens), semconv.GenAIUsageOutputTokens(*rec.CompletionTokens),
			AttrComputedTokens.Int(*rec.ComputedTokens))
		if rec.CachedTokens != nil {
			attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(*rec.CachedTokens))
		}
	}
	sp.SetAttributes(attrs...)
	markFailed(sp, x)
	sp.End()
	x.ops.span = nil
}

// markFailed sets an error status on sp when x failed on the gateway's or upstream's
// side (5xx); a client's error (4xx) is not the server span's.
func markFailed(sp trace.Span, x *exchange) {
	if x.status < 500 {
		return
	}
	desc := http.StatusText(x.status)
	if err := x.ops.failed; err != nil {
		if ae := toAPIError(err); ae.Code != "" {
			desc = ae.Code
		}
	}
	sp.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(x.status)))
	sp.SetStatus(codes.Error, desc)
}

// usageAttrs are one answer's token counts, as the engine reported them.
func usageAttrs(u *oai.Usage) []attribute.KeyValue {
	if u == nil {
		return nil
	}
	attrs := []attribute.KeyValue{semconv.GenAIUsageInputTokens(u.PromptTokens), semconv.GenAIUsageOutputTokens(u.CompletionTokens)}
	if d := u.PromptTokensDetails; d != nil {
		attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(d.CachedTokens))
	}
	return attrs
}

func spanName(model string) string {
	if model == "" {
		return "chat"
	}
	return "chat " + model
}
