package gateway_test

// Issue 25, bytes before the first token: a streamed Responses or Messages request gets
// its opening events as soon as it is admitted, and every begun stream gets keep-alives
// while it is silent. The upstream here stalls until the test releases it, so what the
// client reads before the release came before the upstream answered; no test waits on
// a deadline under a second.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
)

// stallingUpstream answers each request with then, once release is closed; before that
// it has sent nothing (or, with first set, the first chunk of a stream). arrived gets a
// value per request as it comes in.
type stallingUpstream struct {
	release chan struct{}
	arrived chan struct{}
	first   string // a chunk sent before the stall, "" for none
	then    http.HandlerFunc
}

func newStalling(then http.HandlerFunc) *stallingUpstream {
	return &stallingUpstream{release: make(chan struct{}), arrived: make(chan struct{}, 16), then: then}
}

func (u *stallingUpstream) reply(w http.ResponseWriter, r *http.Request) {
	u.arrived <- struct{}{}
	if u.first != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: "+u.first+"\n\n")
		w.(http.Flusher).Flush()
	}
	select {
	case <-u.release:
	case <-r.Context().Done():
		return
	}
	if u.first != "" {
		for _, e := range []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+e+"\n\n")
		}
		return
	}
	u.then(w, r)
}

// helloStream is a whole streamed answer, "hello", with usage.
var helloStream = replySSE([]string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
}, true)

// sseReader reads a stream frame by frame: a frame is the lines up to a blank one.
type sseReader struct{ r *bufio.Reader }

// next is the next frame, its lines joined by "\n"; "" at the end of the stream.
func (s *sseReader) next(t *testing.T) string {
	t.Helper()
	var lines []string
	for {
		line, err := s.r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(lines) > 0 || err != nil {
				return strings.Join(lines, "\n")
			}
			continue
		}
		lines = append(lines, line)
		if err != nil {
			return strings.Join(lines, "\n")
		}
	}
}

// openStream posts body to path and returns the response once its headers are in (the
// client's own limit is 60 s, far past anything a test waits for).
func openStream(t *testing.T, url, path, body string) (*http.Response, *sseReader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &sseReader{r: bufio.NewReader(resp.Body)}
}

func keepalive(d time.Duration) func(*gateway.Options, *openaicompat.Options) {
	return func(o *gateway.Options, _ *openaicompat.Options) { o.KeepaliveInterval = d }
}

var earlyDoors = []struct {
	name, path, body string
	early            []string // the frames' first lines, in order, before the upstream answers
	last             string   // a line of the stream's last frame
}{
	{"responses", "/v1/responses", `{"model":"m1","stream":true,"store":false,"input":"hi"}`,
		[]string{"event: response.created", "event: response.in_progress"}, "event: response.completed"},
	{"messages", "/v1/messages", `{"model":"m1","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`,
		[]string{"event: message_start", "event: ping"}, "event: message_stop"},
}

func TestEarlyEvents_ArriveBeforeTheUpstreamAnswers(t *testing.T) {
	for _, d := range earlyDoors {
		t.Run(d.name, func(t *testing.T) {
			u := newStalling(helloStream)
			g := gatewayFor(t, newUpstream(t, u.reply), keepalive(time.Hour))
			resp, sr := openStream(t, g.URL, d.path, d.body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			for _, want := range d.early {
				if f := sr.next(t); !strings.HasPrefix(f, want+"\n") {
					t.Fatalf("frame %q before the upstream answered, want %s", f, want)
				}
			}
			<-u.arrived // the request did reach the upstream, which has not answered
			close(u.release)
			var frames []string
			for f := sr.next(t); f != ""; f = sr.next(t) {
				frames = append(frames, f)
			}
			all := strings.Join(frames, "\n\n")
			if !strings.Contains(all, "hello") || !strings.HasPrefix(frames[len(frames)-1], d.last) {
				t.Errorf("after the release:\n%s", all)
			}
			if strings.Count(all, d.early[0]) != 0 {
				t.Errorf("the opening events came twice:\n%s", all)
			}
		})
	}
}

// An upstream that fails after the early events: the failure is an event of the stream,
// in the door's shape, and the stream ends.
func TestEarlyEvents_AnUpstreamErrorIsAnEventOfTheStream(t *testing.T) {
	want := map[string][]string{
		"responses": {"event: error", `"code":"server_error"`, "event: response.failed", `"status":"failed"`},
		"messages":  {"event: error", `"type":"error"`, `"type":"api_error"`},
	}
	for _, d := range earlyDoors {
		t.Run(d.name, func(t *testing.T) {
			u := newStalling(replyJSON(http.StatusInternalServerError, `{"error":{"message":"engine exploded","type":"server_error"}}`))
			g := gatewayFor(t, newUpstream(t, u.reply), keepalive(time.Hour))
			resp, sr := openStream(t, g.URL, d.path, d.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			for range d.early {
				sr.next(t)
			}
			close(u.release)
			b, _ := io.ReadAll(sr.r)
			for _, w := range want[d.name] {
				if !strings.Contains(string(b), w) {
					t.Errorf("missing %s in the stream's end:\n%s", w, b)
				}
			}
		})
	}
}

// With the early events off, an upstream's failure before any output is an HTTP status,
// as before.
func TestEarlyEvents_OffLeavesTheFailureAStatus(t *testing.T) {
	for _, d := range earlyDoors {
		t.Run(d.name, func(t *testing.T) {
			up := newUpstream(t, replyJSON(http.StatusInternalServerError, `{"error":{"message":"engine exploded","type":"server_error"}}`))
			g := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) { o.LateStreams = true })
			resp, _ := openStream(t, g.URL, d.path, d.body)
			if resp.StatusCode < 500 || resp.Header.Get("Content-Type") == "text/event-stream" {
				t.Errorf("status %d, content type %q: want an error status", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		})
	}
}

// keepAliveFrame is what each door sends in a silence: on Responses, the start of
// response.in_progress again, numbered after the two opening events (the rest is the
// response: responseskeep_test.go).
var keepAliveFrame = map[string]string{
	"chat":      ": keep-alive",
	"responses": "event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"sequence_number\":%d,\"response\":{",
	"messages":  "event: ping\ndata: {\"type\":\"ping\"}",
}

// A stream that stalls gets keep-alives, one a second here, and the rest of the answer
// once the upstream goes on: Responses and Messages while the model has not begun,
// Chat Completions (whose stream begins at the model's first chunk) between chunks.
func TestKeepAlives_DuringAStall(t *testing.T) {
	doors := append([]struct {
		name, path, body string
		early            []string
		last             string
	}{{"chat", "/v1/chat/completions", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		[]string{"data: "}, "data: [DONE]"}}, earlyDoors...)
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			u := newStalling(helloStream)
			if d.name == "chat" {
				u.first = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}`
			}
			g := gatewayFor(t, newUpstream(t, u.reply), keepalive(time.Second))
			_, sr := openStream(t, g.URL, d.path, d.body)
			for _, want := range d.early {
				if f := sr.next(t); !strings.HasPrefix(f, want) {
					t.Fatalf("frame %q, want %s", f, want)
				}
			}
			// Two keep-alives in a row: the stream is silent but for them.
			for i := 0; i < 2; i++ {
				want := keepAliveFrame[d.name]
				if d.name == "responses" {
					want = fmt.Sprintf(want, 2+i)
				}
				if f := sr.next(t); f != want && (d.name != "responses" || !strings.HasPrefix(f, want)) {
					t.Fatalf("frame %d of the stall %q, want %q", i, f, want)
				}
			}
			close(u.release)
			var last string
			for f := sr.next(t); f != ""; f = sr.next(t) {
				last = f
			}
			if !strings.HasPrefix(last, d.last) {
				t.Errorf("last frame %q, want %s", last, d.last)
			}
		})
	}
}

// A client that stops reading is still cut with keep-alives on: the upstream sends
// 512 KiB, more than the connection holds, then nothing, so the gateway's write and the
// keep-alives after it wait on a client that takes no bytes. Each door's stream is cut
// within write_timeout, counted, its upstream request cancelled, its connection closed;
// the keep-alive's wait on the writer's lock ends with it.
func TestKeepAlives_NonReadingClientIsStillCut(t *testing.T) {
	var cancelled atomic.Int64
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i := 0; i < 512 && r.Context().Err() == nil; i++ {
			if _, err := w.Write(floodChunk); err != nil || rc.Flush() != nil {
				break
			}
		}
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-time.After(60 * time.Second):
		}
	})
	g := smallBufferGateway(t, up, gateway.Options{WriteTimeout: 2 * time.Second, KeepaliveInterval: time.Second})
	host := strings.TrimPrefix(g.URL, "http://")
	for i, d := range slowReaderDoors {
		c, err := dialSmall(host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := sendRaw(c, host, d.path, d.body, "anthropic-version: 2023-06-01"); err != nil {
			t.Fatal(err)
		}
		n := float64(i + 1)
		waitFor(t, d.path+" cut", func() bool {
			return metric(t, g.reg, "maskgate_client_aborts_total", map[string]string{"reason": "slow_reader"}) == n && cancelled.Load() == int64(n)
		})
		if err := closedByPeer(c, 30*time.Second); err != nil {
			t.Errorf("%s: %v", d.path, err)
		}
	}
}

// The time to the first token is the model's, not the early events': the gateway's clock
// (injected) moves 7 s while the upstream stalls after the early events, and the
// histogram's one sample holds those 7 s (the auto strategy learns prefill cost from it).
func TestEarlyEvents_TimeToFirstTokenIsTheModels(t *testing.T) {
	for _, d := range earlyDoors {
		t.Run(d.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Unix(1_800_000_000, 0)
			clock := func() time.Time { // a millisecond a reading, so no two are equal
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(time.Millisecond)
				return now
			}
			u := newStalling(helloStream)
			g := gatewayFor(t, newUpstream(t, u.reply), keepalive(time.Hour), func(o *gateway.Options, _ *openaicompat.Options) { o.Now = clock })
			_, sr := openStream(t, g.URL, d.path, d.body)
			for range d.early {
				sr.next(t)
			}
			mu.Lock()
			now = now.Add(7 * time.Second)
			mu.Unlock()
			close(u.release)
			for f := sr.next(t); f != ""; f = sr.next(t) {
			}
			var count uint64
			var sum float64
			waitFor(t, "the request recorded", func() bool {
				mfs, err := g.reg.Gather()
				if err != nil {
					t.Fatal(err)
				}
				for _, mf := range mfs {
					if mf.GetName() == "maskgate_time_to_first_token_seconds" {
						for _, m := range mf.GetMetric() {
							count, sum = m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
						}
					}
				}
				return count == 1
			})
			if sum < 7 {
				t.Errorf("time to first token %.3f s, want the 7 s the model took after the early events", sum)
			}
		})
	}
}

// Chat Completions opens its stream when the gateway runs a round of its own (here a
// load_tool the model called): a comment, then keep-alives while the next round stalls,
// then the answer, its role chunk first.
func TestKeepAlives_ChatStreamOpensForTheGatewaysOwnRounds(t *testing.T) {
	load := `{"id":"r1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"calendar_create_event\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}}`
	sc := &scripted{replies: []string{load, textReply("done", 60, 50)}}
	h := sc.handler(t)
	var calls atomic.Int32
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 2 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		h(w, r)
	}))
	t.Cleanup(up.Close)
	be, err := openaicompat.New(openaicompat.Options{Name: "up", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	o := gateway.Options{Upstreams: []gateway.Upstream{{Name: "up", Models: []string{"m1"}, Backend: be}}, KeepaliveInterval: time.Second}
	managed(t, &o)
	gw := httptest.NewServer(gateway.New(o))
	t.Cleanup(gw.Close)

	_, sr := openStream(t, gw.URL, "/v1/chat/completions", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"book standup"}]}`)
	for i := 0; i < 3; i++ { // the opening comment, then two keep-alives
		if f := sr.next(t); f != ": keep-alive" {
			t.Fatalf("frame %d %q, want the comment", i, f)
		}
	}
	close(release)
	var frames []string
	for f := sr.next(t); f != ""; f = sr.next(t) {
		frames = append(frames, f)
	}
	if len(frames) < 3 || !strings.Contains(frames[0], `"role":"assistant"`) || !strings.Contains(strings.Join(frames, "\n"), `"finish_reason":"stop"`) ||
		frames[len(frames)-1] != "data: [DONE]" {
		t.Errorf("after the release: %q", frames)
	}
}
