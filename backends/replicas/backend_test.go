package replicas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

// engine is an OpenAI-compatible upstream on loopback whose chat answer the test sets.
type engine struct {
	*httptest.Server
	chats atomic.Int32 // chat completion requests received
	down  atomic.Bool  // GET /v1/models fails while set
}

// answer writes the engine's reply to a chat request.
type answer func(w http.ResponseWriter, r *http.Request, name string)

func newEngine(t *testing.T, name string, chat answer) *engine {
	t.Helper()
	e := &engine{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			if e.down.Load() {
				http.Error(w, "loading", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"shared"},{"id":"only-%s"}]}`, name)
		case "/v1/chat/completions":
			e.chats.Add(1)
			chat(w, r, name)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(e.Close)
	return e
}

// healthy answers whole requests and streams two chunks then [DONE].
func healthy(w http.ResponseWriter, r *http.Request, name string) {
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), `"stream":true`) {
		fmt.Fprintf(w, `{"id":%q}`, name)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":%q,\"n\":1}\n\ndata: {\"id\":%q,\"n\":2}\n\ndata: [DONE]\n\n", name, name)
}

func status(code int) answer {
	return func(w http.ResponseWriter, _ *http.Request, _ string) {
		http.Error(w, `{"error":{"message":"nope","type":"x"}}`, code)
	}
}

// breaksBeforeFirstChunk opens an event stream and ends it with nothing in it.
func breaksBeforeFirstChunk(w http.ResponseWriter, _ *http.Request, _ string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// breaksAfterFirstChunk sends one chunk, then the connection ends without [DONE].
func breaksAfterFirstChunk(w http.ResponseWriter, _ *http.Request, name string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":%q,\"n\":1}\n\n", name)
}

// deadURL is an address where nothing listens any more.
func deadURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

func newReplicas(t *testing.T, o Options, urls ...string) *Backend {
	t.Helper()
	for i, u := range urls {
		be, err := openaicompat.New(openaicompat.Options{Name: fmt.Sprintf("r%d", i), BaseURL: u + "/v1", Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		o.Replicas = append(o.Replicas, Replica{ID: u, Backend: be})
	}
	if o.Name == "" {
		o.Name = "pool"
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// prefixHomedOn finds a prefix whose home replica is i.
func prefixHomedOn(t *testing.T, b *Backend, i int) string {
	t.Helper()
	for n := range 1000 {
		p := fmt.Sprintf("catalog-%d", n)
		if b.Router().Pick(p, "").Order[0] == i {
			return p
		}
	}
	t.Fatalf("no prefix homes on replica %d", i)
	return ""
}

func chat(t *testing.T, b *Backend, prefix, thread string, stream bool) (*backends.Response, error) {
	t.Helper()
	body := `{"model":"m","messages":[]}`
	if stream {
		body = `{"model":"m","messages":[],"stream":true}`
	}
	return b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(body), Model: "m", Stream: stream,
		Prefix: prefix, Thread: thread})
}

// drain reads a stream to its end and closes it.
func drain(t *testing.T, st backends.Stream) ([]string, error) {
	t.Helper()
	defer st.Close()
	var got []string
	for {
		c, err := st.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, string(c))
	}
}

func TestChatCompletion_FailsOverBeforeTheFirstByte(t *testing.T) {
	tests := []struct {
		name     string
		first    answer // nil: nothing listens
		stream   bool
		markDown bool
	}{
		{"unreachable, whole", nil, false, true},
		{"unreachable, stream", nil, true, true},
		{"503", status(http.StatusServiceUnavailable), false, false},
		{"429", status(http.StatusTooManyRequests), true, false},
		{"500 becomes 502", status(http.StatusInternalServerError), false, false},
		{"stream ends before its first chunk", breaksBeforeFirstChunk, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			firstURL := deadURL(t)
			var bad *engine
			if tt.first != nil {
				bad = newEngine(t, "bad", tt.first)
				firstURL = bad.URL
			}
			good := newEngine(t, "good", healthy)
			b := newReplicas(t, Options{}, firstURL, good.URL)
			prefix := prefixHomedOn(t, b, 0)

			resp, err := chat(t, b, prefix, "t", tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get(HeaderReplica); got != "1" {
				t.Errorf("%s = %q, want 1", HeaderReplica, got)
			}
			if tt.stream {
				got, err := drain(t, resp.Stream)
				want := []string{`{"id":"good","n":1}`, `{"id":"good","n":2}`}
				if diff := cmp.Diff(want, got); err != nil || diff != "" {
					t.Errorf("stream (-want +got): %v\n%s", err, diff)
				}
			} else if string(resp.Body) != `{"id":"good"}` {
				t.Errorf("body %s", resp.Body)
			}
			if bad != nil && bad.chats.Load() != 1 {
				t.Errorf("the first replica got %d requests, want 1", bad.chats.Load())
			}
			if down := !b.Router().Healthy(0); down != tt.markDown {
				t.Errorf("first replica marked down: %v, want %v", down, tt.markDown)
			}
			for i := range 2 {
				if l := b.Router().Load(i); l != 0 {
					t.Errorf("replica %d still counts %d in flight", i, l)
				}
			}
		})
	}
}

func TestChatCompletion_NoFailoverAfterTheFirstChunk(t *testing.T) {
	bad := newEngine(t, "bad", breaksAfterFirstChunk)
	good := newEngine(t, "good", healthy)
	b := newReplicas(t, Options{}, bad.URL, good.URL)
	resp, err := chat(t, b, prefixHomedOn(t, b, 0), "t", true)
	if err != nil {
		t.Fatal(err)
	}
	if b.Router().Load(0) != 1 {
		t.Errorf("an open stream counts %d in flight, want 1", b.Router().Load(0))
	}
	got, err := drain(t, resp.Stream)
	if !errors.Is(err, backends.ErrTruncated) {
		t.Errorf("error %v, want the truncation to surface", err)
	}
	if diff := cmp.Diff([]string{`{"id":"bad","n":1}`}, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if n := good.chats.Load(); n != 0 {
		t.Errorf("the other replica got %d requests after the first chunk was out", n)
	}
	if b.Router().Load(0) != 0 {
		t.Errorf("a closed stream still counts in flight")
	}
}

func TestChatCompletion_ClientErrorIsNotRetried(t *testing.T) {
	bad := newEngine(t, "bad", status(http.StatusBadRequest))
	good := newEngine(t, "good", healthy)
	b := newReplicas(t, Options{}, bad.URL, good.URL)
	_, err := chat(t, b, prefixHomedOn(t, b, 0), "t", false)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusBadRequest {
		t.Fatalf("error %v, want the replica's 400", err)
	}
	if n := good.chats.Load(); n != 0 {
		t.Errorf("a 400 was retried on another replica (%d requests)", n)
	}
	if !b.Router().Healthy(0) {
		t.Error("a 400 marked the replica down")
	}
}

func TestChatCompletion_AllReplicasFailingKeepsTheStatus(t *testing.T) {
	a := newEngine(t, "a", status(http.StatusServiceUnavailable))
	c := newEngine(t, "c", status(http.StatusServiceUnavailable))
	b := newReplicas(t, Options{}, a.URL, c.URL)
	_, err := chat(t, b, "p", "t", false)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusServiceUnavailable {
		t.Fatalf("error %v, want 503", err)
	}
	if a.chats.Load() != 1 || c.chats.Load() != 1 {
		t.Errorf("requests %d and %d, want one each", a.chats.Load(), c.chats.Load())
	}
}

func TestChatCompletion_SessionsOfAProfileShareAReplicaAndThreadsStick(t *testing.T) {
	engines := []*engine{newEngine(t, "e0", healthy), newEngine(t, "e1", healthy), newEngine(t, "e2", healthy)}
	b := newReplicas(t, Options{}, engines[0].URL, engines[1].URL, engines[2].URL)
	served := map[string]int{}
	for n := range 30 {
		resp, err := chat(t, b, "catalog-v7", fmt.Sprintf("thread-%d", n), n%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		served[resp.Header.Get(HeaderReplica)]++
		if resp.Stream != nil {
			drain(t, resp.Stream)
		}
	}
	if len(served) != 1 {
		t.Errorf("30 sessions of one catalog spread over replicas %v, want one", served)
	}
	// A thread that was moved (its home was down) keeps to where its conversation is.
	home := b.Router().Pick("catalog-v7", "").Order[0]
	b.Router().MarkDown(home)
	resp, err := chat(t, b, "catalog-v7", "moved", false)
	if err != nil {
		t.Fatal(err)
	}
	moved := resp.Header.Get(HeaderReplica)
	if moved == fmt.Sprint(home) {
		t.Fatalf("served by the replica marked down")
	}
	b.Router().MarkUp(home)
	resp, err = chat(t, b, "catalog-v7", "moved", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get(HeaderReplica); got != moved {
		t.Errorf("the thread went to %s, want %s where it was served", got, moved)
	}
}

func TestHealthCheck_MarksAReplicaDownAndUpAgain(t *testing.T) {
	e0, e1 := newEngine(t, "e0", healthy), newEngine(t, "e1", healthy)
	b := newReplicas(t, Options{HealthInterval: 5 * time.Millisecond}, e0.URL, e1.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Start(ctx)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	e1.down.Store(true)
	waitFor("replica 1 is marked down", func() bool { return !b.Router().Healthy(1) })
	if !b.Router().Healthy(0) {
		t.Error("the healthy replica was marked down")
	}
	e1.down.Store(false)
	waitFor("replica 1 is marked up", func() bool { return b.Router().Healthy(1) })
}

func TestPing_UpWhileAnyReplicaIsUp(t *testing.T) {
	e0, e1 := newEngine(t, "e0", healthy), newEngine(t, "e1", healthy)
	b := newReplicas(t, Options{}, e0.URL, e1.URL)
	e0.down.Store(true)
	if err := b.Ping(context.Background()); err != nil {
		t.Errorf("one replica up: %v", err)
	}
	e1.down.Store(true)
	if err := b.Ping(context.Background()); err == nil {
		t.Error("every replica down: Ping succeeded")
	}
	if b.Router().Healthy(0) || b.Router().Healthy(1) {
		t.Error("a failed ping did not mark its replica down")
	}
}

func TestListModels_IsTheUnionOfWhatAnswers(t *testing.T) {
	e0, e1 := newEngine(t, "e0", healthy), newEngine(t, "e1", healthy)
	b := newReplicas(t, Options{}, e0.URL, deadURL(t), e1.URL)
	got, err := b.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"shared", "only-e0", "only-e1"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	dead := newReplicas(t, Options{}, deadURL(t))
	if _, err := dead.ListModels(context.Background()); err == nil {
		t.Error("no replica answered: no error")
	}
}

// fake is a backend that does nothing but say whether it constrains tools.
type fake struct{ constrains bool }

func (fake) ChatCompletion(context.Context, *backends.Request) (*backends.Response, error) {
	return &backends.Response{Body: []byte(`{}`)}, nil
}

type constrainer struct {
	fake
}

func (c constrainer) ConstrainsTools() bool { return c.constrains }

func TestConstrainsTools_OnlyWhenEveryReplicaDoes(t *testing.T) {
	tests := []struct {
		name     string
		replicas []backends.Backend
		want     bool
	}{
		{"all constrain", []backends.Backend{constrainer{fake{true}}, constrainer{fake{true}}}, true},
		{"one cannot", []backends.Backend{constrainer{fake{true}}, fake{}}, false},
		{"one says no", []backends.Backend{constrainer{fake{true}}, constrainer{fake{false}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []Replica
			for i, be := range tt.replicas {
				rs = append(rs, Replica{ID: fmt.Sprint(i), Backend: be})
			}
			b, err := New(Options{Name: "p", Replicas: rs})
			if err != nil {
				t.Fatal(err)
			}
			if got := b.ConstrainsTools(); got != tt.want {
				t.Errorf("ConstrainsTools() = %v, want %v", got, tt.want)
			}
		})
	}
}

// loader is a backend that says how it serves strategy index.
type loader struct {
	fake
	kind backends.LoadKind
}

func (l loader) LoadsTools() backends.LoadKind { return l.kind }

func TestLoadsTools_TheReplicasKindWhenEveryReplicaHasIt(t *testing.T) {
	def, deferred := backends.LoadByDefinition, backends.LoadDeferred
	tests := []struct {
		name     string
		replicas []backends.Backend
		want     backends.LoadKind
	}{
		{"all by definition", []backends.Backend{loader{kind: def}, loader{kind: def}}, def},
		{"one replica, deferred", []backends.Backend{loader{kind: deferred}}, deferred},
		{"one cannot say", []backends.Backend{loader{kind: def}, fake{}}, backends.LoadNone},
		{"one says none", []backends.Backend{loader{kind: def}, loader{kind: backends.LoadNone}}, backends.LoadNone},
		{"kinds differ", []backends.Backend{loader{kind: def}, loader{kind: deferred}}, backends.LoadNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []Replica
			for i, be := range tt.replicas {
				rs = append(rs, Replica{ID: fmt.Sprint(i), Backend: be})
			}
			b, err := New(Options{Name: "p", Replicas: rs})
			if err != nil {
				t.Fatal(err)
			}
			if got := b.LoadsTools(); got != tt.want {
				t.Errorf("LoadsTools() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNew_RefusesNoReplicas(t *testing.T) {
	if _, err := New(Options{Name: "p"}); err == nil || !strings.Contains(err.Error(), "url") {
		t.Errorf("error %v", err)
	}
	if _, err := New(Options{Name: "p", Replicas: []Replica{{ID: "a"}}}); err == nil {
		t.Error("a replica without a backend was accepted")
	}
}

// replicaGoroutines lists the stacks of goroutines running this package's code.
func replicaGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "backends/replicas.(*Backend)") {
			out = append(out, g)
		}
	}
	return out
}

func TestClose_EndsEveryGoroutine(t *testing.T) {
	e0 := newEngine(t, "e0", healthy)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a ping that never answers
	}))
	defer slow.Close()
	b := newReplicas(t, Options{HealthInterval: time.Millisecond, PingTimeout: time.Minute}, e0.URL, slow.URL)
	b.Start(context.Background())
	if err := b.Ping(context.Background()); err != nil { // returns on e0's answer, slow's ping still out
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // let the loop start a round that hangs on slow
	if len(replicaGoroutines()) == 0 {
		t.Fatal("no health check goroutine is running: the test would prove nothing")
	}
	b.Close()
	b.Close()
	deadline := time.Now().Add(5 * time.Second)
	for gs := replicaGoroutines(); len(gs) > 0; gs = replicaGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after Close:\n%s", len(gs), strings.Join(gs, "\n\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStart_StopsWithItsContext(t *testing.T) {
	e0 := newEngine(t, "e0", healthy)
	b := newReplicas(t, Options{HealthInterval: time.Millisecond}, e0.URL)
	ctx, cancel := context.WithCancel(context.Background())
	b.Start(ctx)
	cancel()
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the health loop outlived its context")
	}
}

func TestChatCompletion_AnAnswerMarksItsReplicaUp(t *testing.T) {
	e0 := newEngine(t, "e0", healthy)
	b := newReplicas(t, Options{}, e0.URL)
	b.Router().MarkDown(0) // a stale mark: the only replica is tried anyway
	if _, err := chat(t, b, "p", "t", false); err != nil {
		t.Fatal(err)
	}
	if !b.Router().Healthy(0) {
		t.Error("a replica that answered is still marked down")
	}
}
