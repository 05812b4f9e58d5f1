package observe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/kvcache"
)

// opens is a request that says whether it opens its thread.
type opens bool

func (o opens) OpensThread() bool { return bool(o) }

// BenchmarkWatch is what the request log and live statistics add to every request's
// end, tracing off.
func BenchmarkWatch(b *testing.B) {
	v := New(Options{})
	u := &oai.Usage{PromptTokens: 1000, CompletionTokens: 20, PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: 900}}
	e := Ended{ID: "req_1", Start: time.Now(), Total: 5 * time.Second, Backend: "up", Strategy: "eager", Status: 200,
		Stream: true, TTFT: time.Second, Usage: u, Account: kvcache.Account(1000, 900, kvcache.NotKnown), Cache: "reported",
		Door: "chat_completions"}
	var o Request
	b.ReportAllocs()
	for b.Loop() {
		v.RequestEnded(&o, e)
	}
}

// TestView_NilObservesNothing: a gateway without the operator's view passes a nil *View
// every event of a request, a tool run included, and the request goes on untouched.
func TestView_NilObservesNothing(t *testing.T) {
	var v *View
	var o Request
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	if got := v.RequestBegun(r, &o, Begun{ID: "req_1", Door: "chat_completions", Start: time.Now()}); got != r {
		t.Fatal("RequestBegun on a nil View changed the request")
	}
	ctx := context.Background()
	if got := v.RoundBegun(ctx, &o, Round{N: 0, Backend: "up", Loaded: []string{"a"}}); got != ctx {
		t.Fatal("RoundBegun on a nil View changed the context")
	}
	v.RoundEnded(&o, Answer{Usage: &oai.Usage{PromptTokens: 10}})
	tctx, sp := v.ToolBegun(ctx, "search_tools", "call_1", ToolTypeDatastore)
	if tctx != ctx || sp != nil {
		t.Fatalf("ToolBegun on a nil View: context changed %v, span %v", tctx != ctx, sp)
	}
	v.ToolEnded(tctx, sp, ToolErrFailed)
	v.RequestEnded(&o, Ended{Status: 200})
	v.CloseEvents()
	if o.rounds != 0 || o.noted {
		t.Fatalf("a nil View kept notes: %+v", o)
	}
}

// TestView_RoundsAndMissFromEvents: the events alone, without a gateway, give the
// request log its rounds and miss reasons — a thread's first request is a new thread,
// its second with another catalog version a changed catalog.
func TestView_RoundsAndMissFromEvents(t *testing.T) {
	v := New(Options{})
	end := func(version string, first opens) RequestRecord {
		var o Request
		u := &oai.Usage{PromptTokens: 100, CompletionTokens: 5, PromptTokensDetails: &oai.PromptTokensDetails{}}
		for n := range 2 {
			v.RoundBegun(context.Background(), &o, Round{N: n, Backend: "up"})
			v.RoundEnded(&o, Answer{Usage: u})
		}
		v.RequestEnded(&o, Ended{ID: "r", Start: time.Now(), Status: 200, Backend: "up", Usage: u,
			Account: kvcache.Account(100, 0, kvcache.NotKnown), Thread: "t1", CatalogVersion: version, Opens: first})
		return v.reqlog.latest(1)[0]
	}
	if rec := end("v1", opens(true)); rec.Rounds != 2 || rec.Miss != MissNewThread {
		t.Fatalf("first request: rounds %d miss %q, want 2 and %q", rec.Rounds, rec.Miss, MissNewThread)
	}
	if rec := end("v2", opens(false)); rec.Miss != MissCatalogChanged {
		t.Fatalf("second request, new catalog: miss %q, want %q", rec.Miss, MissCatalogChanged)
	}
}
