package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/observe"
	"github.com/maskgate/maskgate/gateway/tracing"
	"github.com/maskgate/maskgate/internal/mcptest"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/mcp"
	"github.com/maskgate/maskgate/toolsearch/profile"
)

// tracedGateway is an ops gateway whose spans go to an in-memory exporter and whose
// upstream transport carries the trace context, as cmd/gateway wires them.
func tracedGateway(t *testing.T, e *fakeEngine, managed bool) (*opsGateway, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	g := newOpsGateway(t, e, func(o *gateway.Options, bo *openaicompat.Options) {
		o.TracerProvider = tp
		bo.Transport = tracing.Transport(http.DefaultTransport.(*http.Transport).Clone())
		if !managed {
			o.Tools, o.State = nil, nil
		}
	})
	return g, exp
}

func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// spanTree checks the spans of one request: one server span named name, and under it
// either rounds (maskgate.round spans, each with one client span) or, with rounds 0, one
// client span. It returns the server span, the rounds and the client spans in order.
func spanTree(t *testing.T, spans tracetest.SpanStubs, name string, rounds int) (server tracetest.SpanStub, rs, clients []tracetest.SpanStub) {
	t.Helper()
	var servers []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindServer {
			servers = append(servers, s)
		}
	}
	if len(servers) != 1 || servers[0].Name != name {
		t.Fatalf("server spans %v, want one %q", names(servers), name)
	}
	server = servers[0]
	childrenOf := func(p tracetest.SpanStub) (out []tracetest.SpanStub) {
		for _, s := range spans {
			if s.Parent.SpanID() == p.SpanContext.SpanID() && s.SpanContext.TraceID() == p.SpanContext.TraceID() {
				out = append(out, s)
			}
		}
		slices.SortFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		return out
	}
	kids := childrenOf(server)
	if rounds == 0 {
		if len(kids) != 1 || kids[0].SpanKind != trace.SpanKindClient || kids[0].Name != name {
			t.Fatalf("the relayed request's children: %v", names(kids))
		}
		return server, nil, kids
	}
	if len(kids) != rounds {
		t.Fatalf("%d children of the request span (%v), want %d rounds", len(kids), names(kids), rounds)
	}
	tools := 0
	for i, r := range kids {
		if r.Name != "maskgate.round" || attrs(r)["maskgate.round"].AsInt64() != int64(i) {
			t.Errorf("round %d: %s %v", i, r.Name, r.Attributes)
		}
		// A round is its upstream call, then the tools the gateway ran (toolSpans).
		calls := childrenOf(r)
		if len(calls) == 0 || calls[0].SpanKind != trace.SpanKindClient || calls[0].Name != name {
			t.Fatalf("round %d's children: %v", i, names(calls))
		}
		for _, c := range calls[1:] {
			if c.SpanKind != trace.SpanKindInternal || !strings.HasPrefix(c.Name, "execute_tool ") {
				t.Fatalf("round %d's children: %v", i, names(calls))
			}
		}
		tools += len(calls) - 1
		clients = append(clients, calls[0])
	}
	if len(spans) != 1+2*rounds+tools {
		t.Errorf("%d spans, want %d: %v", len(spans), 1+2*rounds+tools, names(spans))
	}
	return server, kids, clients
}

// toolSpans are the execute_tool spans under round, in the order they started.
func toolSpans(spans tracetest.SpanStubs, round tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.SpanID() == round.SpanContext.SpanID() && strings.HasPrefix(s.Name, "execute_tool ") {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

func names(spans []tracetest.SpanStub) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = fmt.Sprintf("%s(%s)", s.Name, s.SpanKind)
	}
	return out
}

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// checkPropagated: the engine got, on each call, a traceparent naming that call's span.
func checkPropagated(t *testing.T, e *fakeEngine, clients []tracetest.SpanStub) {
	t.Helper()
	got := e.seenTraceparents()
	if len(got) != len(clients) {
		t.Fatalf("the engine saw %d traceparents for %d calls: %q", len(got), len(clients), got)
	}
	for i, tp := range got {
		m := traceparentRE.FindStringSubmatch(tp)
		sc := clients[i].SpanContext
		if m == nil || m[1] != sc.TraceID().String() || m[2] != sc.SpanID().String() {
			t.Errorf("call %d: traceparent %q, want trace %s span %s", i, tp, sc.TraceID(), sc.SpanID())
		}
	}
}

// TestTrace_MultiRoundRequest: a whole request whose model searches and loads a tool
// before answering is one server span with a round span per upstream call, each holding
// the call's client span; the GenAI and maskgate attributes are the request's; the
// engine got each call's trace context.
func TestTrace_MultiRoundRequest(t *testing.T) {
	e := newFakeEngine(t,
		fakeReply{call: "search_tools", args: `{"query":"slack SECRET-ARGS"}`},
		fakeReply{call: "load_tool", args: `{"toolName":"slack_send_message"}`},
		fakeReply{text: "sent it"})
	g, exp := tracedGateway(t, e, true)
	if code, out := g.chat(t, opsChat("m1", false, "tell the team on slack SECRET-PROMPT"), "t1"); code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	spans := exp.GetSpans()
	server, rounds, clients := spanTree(t, spans, "chat m1", 3)
	rec := g.requestLog(t, 1)[0]
	a := attrs(server)
	for k, want := range map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "m1", "gen_ai.response.model": fakeModel,
		"gen_ai.usage.input_tokens": int64(*rec.PromptTokens), "gen_ai.usage.output_tokens": int64(*rec.CompletionTokens),
		"gen_ai.usage.cache_read.input_tokens": int64(*rec.CachedTokens), "gen_ai.request.stream": false,
		"maskgate.strategy": "remove", "maskgate.catalog.version": rec.CatalogVersion, "maskgate.door": "chat_completions",
		"maskgate.backend": "vllm-a", "maskgate.profile": "default", "maskgate.rounds": int64(3), "maskgate.thread": rec.Thread,
		"maskgate.cache.miss": observe.MissNewThread, "maskgate.request_id": rec.RequestID, "http.response.status_code": int64(200),
	} {
		if got, ok := a[k]; !ok || got.AsInterface() != want {
			t.Errorf("request span %s = %v, want %v", k, got.AsInterface(), want)
		}
	}
	if *rec.PromptTokens == 0 || *rec.CachedTokens == 0 {
		t.Errorf("the rounds' tokens: %+v", rec)
	}
	if got := attrs(rounds[0])["maskgate.round.tool_calls"].AsStringSlice(); !slices.Equal(got, []string{"search_tools"}) {
		t.Errorf("round 0 tool calls %v", got)
	}
	if _, ok := attrs(rounds[2])["maskgate.round.tool_calls"]; ok {
		t.Errorf("the last round made no call: %v", rounds[2].Attributes)
	}
	var input int64
	for i, c := range clients {
		ca := attrs(c)
		input += ca["gen_ai.usage.input_tokens"].AsInt64()
		if ca["gen_ai.response.model"].AsString() != fakeModel || ca["gen_ai.request.model"].AsString() != "m1" {
			t.Errorf("call %d: %v", i, c.Attributes)
		}
	}
	if input != int64(*rec.PromptTokens) {
		t.Errorf("the calls' input tokens sum to %d, the request's %d", input, *rec.PromptTokens)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), "SECRET") {
				t.Errorf("span %s holds %s=%s", s.Name, kv.Key, kv.Value.Emit())
			}
		}
	}
	checkPropagated(t, e, clients)
}

// TestTrace_StreamedRequest: a streamed request is one round; its client span ends when
// its stream was read, with the round's usage.
func TestTrace_StreamedRequest(t *testing.T) {
	e := newFakeEngine(t, fakeReply{text: "streamed words come here"})
	g, exp := tracedGateway(t, e, true)
	if code, out := g.chat(t, opsChat("m1", true, "hi"), "t1"); code != 200 || !strings.Contains(string(out), "[DONE]") {
		t.Fatalf("%d %s", code, out)
	}
	server, _, clients := spanTree(t, exp.GetSpans(), "chat m1", 1)
	a, ca := attrs(server), attrs(clients[0])
	if !a["gen_ai.request.stream"].AsBool() || a["gen_ai.response.model"].AsString() != fakeModel || a["gen_ai.usage.output_tokens"].AsInt64() != 4 {
		t.Errorf("request span %v", server.Attributes)
	}
	if ca["gen_ai.usage.input_tokens"] != a["gen_ai.usage.input_tokens"] || !slices.Equal(ca["gen_ai.response.finish_reasons"].AsStringSlice(), []string{"stop"}) {
		t.Errorf("client span %v", clients[0].Attributes)
	}
	if clients[0].EndTime.After(server.EndTime) {
		t.Errorf("the call ended after the request")
	}
	checkPropagated(t, e, clients)
}

// TestTrace_RelayedRequests: a request relayed byte for byte (no tool management),
// whole and streamed, has its upstream call as its only child, with the usage; a client's
// traceparent makes the request part of the client's trace.
func TestTrace_RelayedRequests(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newFakeEngine(t)
			g, exp := tracedGateway(t, e, false)
			const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(opsChat("m2", stream, "hi")))
			req.Header.Set("traceparent", parent)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			g.waitLogged(t, resp.Header.Get(gateway.HeaderRequestID))
			server, _, clients := spanTree(t, exp.GetSpans(), "chat m2", 0)
			if server.Parent.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || server.Parent.SpanID().String() != "b7ad6b7169203331" || !server.Parent.IsRemote() {
				t.Errorf("the request span's parent %v, want the client's", server.Parent)
			}
			ca := attrs(clients[0])
			if ca["gen_ai.usage.input_tokens"].AsInt64() == 0 || attrs(server)["maskgate.strategy"].AsString() != "eager" {
				t.Errorf("client span %v, request span %v", clients[0].Attributes, server.Attributes)
			}
			if _, ok := attrs(server)["maskgate.catalog.version"]; ok {
				t.Errorf("an unmanaged request has no catalog: %v", server.Attributes)
			}
			checkPropagated(t, e, clients)
		})
	}
}

// TestTrace_UpstreamFailureMarksSpans: a request the upstream fails (502) marks the
// request's and the call's spans as errors.
func TestTrace_UpstreamFailureMarksSpans(t *testing.T) {
	e := newFakeEngine(t)
	e.Close() // unreachable
	g, exp := tracedGateway(t, e, true)
	if code, _ := g.chat(t, opsChat("m1", false, "hi"), "t1"); code != 502 {
		t.Fatalf("status %d, want 502", code)
	}
	server, _, clients := spanTree(t, exp.GetSpans(), "chat m1", 1)
	for _, s := range []tracetest.SpanStub{server, clients[0]} {
		if s.Status.Code != codes.Error || s.Status.Description != "upstream_unreachable" || attrs(s)["error.type"].AsString() != "502" {
			t.Errorf("%s(%s): status %+v, error.type %v", s.Name, s.SpanKind, s.Status, attrs(s)["error.type"].AsInterface())
		}
	}
}

// TestTrace_OffWithoutAProvider: without a tracer provider no trace context reaches the
// engine, not even the client's own.
func TestTrace_OffWithoutAProvider(t *testing.T) {
	e := newFakeEngine(t)
	g := newOpsGateway(t, e, func(_ *gateway.Options, bo *openaicompat.Options) {
		bo.Transport = tracing.Transport(http.DefaultTransport.(*http.Transport).Clone())
	})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(opsChat("m1", false, "hi")))
	req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := e.seenTraceparents(); len(got) != 1 || got[0] != "" {
		t.Errorf("the engine saw traceparents %q", got)
	}
}

// mcpRunner runs every tool of its MCP servers, as cmd/gateway's runner does for servers
// with execute: gateway.
type mcpRunner []*mcp.Server

func (m mcpRunner) owner(tool string) *mcp.Server {
	for _, srv := range m {
		if slices.ContainsFunc(srv.Tools(), func(t toolsearch.Tool) bool { return t.Name == tool }) {
			return srv
		}
	}
	return nil
}

func (m mcpRunner) Runs(tool string) bool { return m.owner(tool) != nil }

func (m mcpRunner) Run(ctx context.Context, tool string, args json.RawMessage, bearer string) (string, bool) {
	r := m.owner(tool).Call(ctx, tool, args, bearer)
	return r.Text, r.IsError
}

// The test's two MCP servers' timeouts: calls that must be answered get 30 s, far beyond
// a loopback call on a loaded machine; the sleep, on a server of its own, must outlast
// slowTimeout, which is short so that the test does not wait long for it to fire.
const (
	mcpTimeout  = 30 * time.Second
	slowTimeout = 3 * time.Second
)

// TestTrace_ToolRunsHaveTheirOwnSpans: a request whose model searches, loads three MCP
// tools and calls each (one answers, one fails, one outlasts the server's timeout) has,
// in each round after the upstream call, one execute_tool span per tool the gateway ran,
// meta-tools included: named and attributed as the GenAI conventions say, an error
// status on the failure and on the timeout, and neither arguments nor results.
func TestTrace_ToolRunsHaveTheirOwnSpans(t *testing.T) {
	url := mcptest.HTTP(t).URL
	var servers mcpRunner
	for _, c := range []mcp.Config{{Name: "mcp", URL: url, Timeout: mcpTimeout}, {Name: "slow", URL: url, Timeout: slowTimeout}} {
		srv, err := mcp.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		if err := srv.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, srv)
	}
	// 16 tools of the profile's own and each server's 9: a catalog the gateway manages.
	var filler []toolsearch.Tool
	for i := range 16 {
		filler = append(filler, toolsearch.Tool{Name: fmt.Sprintf("misc_tool_%02d", i), Description: "Does its job.", Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	sources := []profile.Source{{Kind: "inline", Name: "inline", Tools: filler}}
	for _, srv := range servers {
		sources = append(sources, profile.Source{Kind: "mcp", Name: srv.Name(), Tools: srv.Tools()})
	}
	cat, err := profile.New(profile.Spec{}, sources)
	if err != nil {
		t.Fatal(err)
	}
	e := newFakeEngine(t,
		fakeReply{call: "search_tools", args: `{"query":"echo SECRET-ARGS"}`},
		fakeReply{call: "load_tool", args: `{"toolNames":["mcp_echo","mcp_fail","slow_sleep"]}`},
		fakeReply{call: "mcp_echo", args: `{"text":"SECRET-RESULT"}`},
		fakeReply{call: "mcp_fail", args: `{}`},
		fakeReply{call: "slow_sleep", args: `{"ms":600000}`},
		fakeReply{text: "all done"})
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	g := newOpsGateway(t, e, func(o *gateway.Options, _ *openaicompat.Options) {
		o.TracerProvider = tp
		o.Profiles = []*gateway.Profile{{Name: gateway.DefaultProfile, Catalog: cat, Strategy: gateway.StrategyRemove, MaxRounds: 8, Runner: servers}}
	})
	if code, out := g.chat(t, opsChat("m1", false, "echo something"), "t1"); code != 200 || !strings.Contains(string(out), "all done") {
		t.Fatalf("%d %s", code, out)
	}
	spans := exp.GetSpans()
	_, rounds, clients := spanTree(t, spans, "chat m1", 6)
	want := []struct {
		tool, typ, errType string
	}{
		{"search_tools", "datastore", ""}, {"load_tool", "datastore", ""},
		{"mcp_echo", "extension", ""}, {"mcp_fail", "extension", "tool_error"}, {"slow_sleep", "extension", "tool_error"},
	}
	for i, r := range rounds {
		got := toolSpans(spans, r)
		if i == len(want) {
			if len(got) != 0 {
				t.Errorf("the last round ran no tool, yet has %v", names(got))
			}
			break
		}
		w := want[i]
		if len(got) != 1 {
			t.Errorf("round %d: tool spans %v, want one for %s", i, names(got), w.tool)
			continue
		}
		sp, a := got[0], attrs(got[0])
		if sp.Name != "execute_tool "+w.tool || a["gen_ai.operation.name"].AsString() != "execute_tool" ||
			a["gen_ai.tool.name"].AsString() != w.tool || a["gen_ai.tool.call.id"].AsString() != "call_"+w.tool || a["gen_ai.tool.type"].AsString() != w.typ {
			t.Errorf("round %d: %s %v", i, sp.Name, sp.Attributes)
		}
		if w.errType == "" && (sp.Status.Code == codes.Error || a["error.type"].Type() != attribute.INVALID) {
			t.Errorf("%s: status %+v, attributes %v; it did not fail", w.tool, sp.Status, sp.Attributes)
		}
		if w.errType != "" && (sp.Status.Code != codes.Error || a["error.type"].AsString() != w.errType) {
			t.Errorf("%s: status %+v, error.type %v; want an error %s", w.tool, sp.Status, a["error.type"].AsInterface(), w.errType)
		}
		// The run comes after the round's upstream call was read, within the round.
		if sp.StartTime.Before(clients[i].EndTime) || sp.EndTime.After(r.EndTime) {
			t.Errorf("%s ran %v–%v; its round's call ended %v, the round %v", w.tool, sp.StartTime, sp.EndTime, clients[i].EndTime, r.EndTime)
		}
	}
	// The model was told of the timeout: the sleep did outlast the server's bound.
	e.mu.Lock()
	last := e.prompts[len(e.prompts)-1]
	e.mu.Unlock()
	if !strings.Contains(last, "timed out after "+slowTimeout.String()) {
		t.Errorf("the last prompt does not report the timeout: …%s", last[max(0, len(last)-400):])
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), "SECRET") {
				t.Errorf("span %s holds %s=%s", s.Name, kv.Key, kv.Value.Emit())
			}
		}
		if strings.Contains(s.Status.Description, "SECRET") || strings.Contains(s.Status.Description, "on purpose") {
			t.Errorf("span %s's status holds the tool's words: %q", s.Name, s.Status.Description)
		}
	}
}
