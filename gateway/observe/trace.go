package observe

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

// startSpan starts o's request span and puts it, and o, in r's context.
func (v *View) startSpan(r *http.Request, o *Request, b Begun) *http.Request {
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, o.span = v.tracer.Start(ctx, "chat", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(b.Start),
		trace.WithAttributes(semconv.GenAIOperationNameChat, AttrDoor.String(b.Door), AttrRequestID.String(b.ID)))
	// The tool loop runs tools with the request alone (the gateway's toolloop.go); this
	// is how their spans find the round they belong to.
	ctx = context.WithValue(ctx, requestKey{}, o)
	return r.WithContext(ctx)
}

// roundSpans ends the previous round's spans and starts rd's: its round span (none for
// a relayed request) and its upstream call's.
func (v *View) roundSpans(ctx context.Context, o *Request, rd Round) context.Context {
	v.roundEnd(o, nil, 0)
	if rd.N >= 0 {
		ctx, o.round = v.tracer.Start(ctx, "maskgate.round", trace.WithAttributes(AttrRound.Int(rd.N)))
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, AttrBackend.String(rd.Backend), semconv.GenAIRequestStream(rd.Stream)}
	if o.Model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(o.Model))
	}
	ctx, o.upstream = v.tracer.Start(ctx, spanName(o.Model), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx
}

// endUpstream ends a read answer's upstream span with its attributes, and names the
// tools it called on its round's span.
func endUpstream(o *Request, a Answer) {
	if sp := o.upstream; sp != nil {
		attrs := []attribute.KeyValue{AttrStrategy.String(a.Strategy)}
		if a.Model != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(a.Model))
		}
		if a.Finish != "" {
			attrs = append(attrs, semconv.GenAIResponseFinishReasons(a.Finish))
		}
		if a.Replica != "" {
			attrs = append(attrs, AttrReplica.String(a.Replica))
		}
		sp.SetAttributes(append(attrs, usageAttrs(a.Usage)...)...)
		sp.End()
		o.upstream = nil
	}
	if o.round != nil && a.Calls > 0 && a.Names != nil {
		o.round.SetAttributes(AttrToolCalls.StringSlice(a.Names.CallNames()))
	}
}

// roundEnd ends the round's spans still open: a failure (status, at the request's end)
// marks them. usage is the request's, for a relayed answer's upstream span.
func (v *View) roundEnd(o *Request, usage *oai.Usage, status int) {
	if sp := o.upstream; sp != nil {
		if usage != nil && o.round == nil { // a relayed answer: its usage is the request's
			sp.SetAttributes(usageAttrs(usage)...)
		}
		markFailed(sp, o, status)
		sp.End()
		o.upstream = nil
	}
	if sp := o.round; sp != nil {
		markFailed(sp, o, status)
		sp.End()
		o.round = nil
	}
}

// requestKey carries a traced request's *Request in its context.
type requestKey struct{}

// toolContext is ctx, when the request is traced, with its current round span as the
// span that tool runs are children of. The loop runs tools between a round's upstream
// call and the next round, while that round is open.
func toolContext(ctx context.Context) context.Context {
	if o, _ := ctx.Value(requestKey{}).(*Request); o != nil && o.round != nil {
		return trace.ContextWithSpan(ctx, o.round)
	}
	return ctx
}

// Tool types (gen_ai.tool.type): the GenAI conventions call a tool the agent's side
// runs an extension, and one that retrieves data for the model a datastore.
const (
	ToolTypeExtension = "extension" // a profile's MCP tool the gateway runs
	ToolTypeDatastore = "datastore" // search_tools and load_tool, over the catalog
)

// ToolBegun starts the span of one tool run the gateway makes (name and call id, never
// arguments) under the request's current round, named and attributed as the GenAI
// conventions' execute_tool; nil when tracing is off. ctx is the request's.
func (v *View) ToolBegun(ctx context.Context, name, id, typ string) (context.Context, trace.Span) {
	if v == nil || v.tracer == nil {
		return ctx, nil
	}
	return v.tracer.Start(toolContext(ctx), "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name),
			semconv.GenAIToolCallID(id), semconv.GenAIToolType(typ)))
}

// Error types (error.type) of a failed tool run.
const (
	ToolErrFailed    = "tool_error"    // the tool, or its server, answered with an error
	ToolErrTimeout   = "timeout"       // the request's deadline passed during the run
	ToolErrCancelled = "cancelled"     // the request was cancelled (its client left) during the run
	ToolErrCut       = "arguments_cut" // the call was cut by max_tokens: nothing ran
)

// ToolEnded ends a tool run's span from ToolBegun; errType, when not empty, marks it
// failed. The description is the error type's, never the tool's message: that is its
// result.
func (v *View) ToolEnded(ctx context.Context, sp trace.Span, errType string) {
	if sp == nil {
		return
	}
	if errType == ToolErrFailed {
		// A run cut short by the request's end reads as the tool's failure to the runner.
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			errType = ToolErrTimeout
		case ctx.Err() != nil:
			errType = ToolErrCancelled
		}
	}
	if errType != "" {
		sp.SetAttributes(semconv.ErrorTypeKey.String(errType))
		sp.SetStatus(codes.Error, errType)
	}
	sp.End()
}

// endSpan ends o's request span with what the request did (rec).
func (v *View) endSpan(o *Request, e *Ended, rec *RequestRecord) {
	sp := o.span
	if sp == nil {
		return
	}
	v.roundEnd(o, e.Usage, e.Status)
	sp.SetName(spanName(rec.Model))
	attrs := []attribute.KeyValue{AttrStrategy.String(rec.Strategy), AttrBackend.String(rec.Backend),
		semconv.HTTPResponseStatusCode(rec.Status), semconv.GenAIRequestStream(rec.Stream), AttrRounds.Int(rec.Rounds)}
	if rec.Model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(rec.Model))
	}
	if o.respModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(o.respModel))
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
	markFailed(sp, o, e.Status)
	sp.End()
	o.span = nil
}

// markFailed sets an error status on sp when the request failed on the gateway's or
// upstream's side (5xx); a client's error (4xx) is not the server span's.
func markFailed(sp trace.Span, o *Request, status int) {
	if status < 500 {
		return
	}
	sp.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
	sp.SetStatus(codes.Error, failedDesc(o, status))
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
