package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var fixedNow = func() time.Time { return time.Unix(1700000000, 0) }

const testKey = "sk-ant-test"

// fakeAnthropic serves POST /v1/messages with messages, after checking the headers every
// Messages API call needs ("Create a Message": x-api-key, anthropic-version,
// content-type), and records the bodies it got.
type fakeAnthropic struct {
	*httptest.Server
	t      *testing.T
	mu     sync.Mutex
	bodies [][]byte
}

func newFake(t *testing.T, messages http.HandlerFunc) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		if !f.headersOK(w, r) {
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			f.t.Errorf("content-type = %q", ct)
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		messages(w, r)
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if !f.headersOK(w, r) {
			return
		}
		switch r.URL.Query().Get("after_id") {
		case "":
			if r.URL.Query().Get("limit") == "1" {
				io.WriteString(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`)
				return
			}
			io.WriteString(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5"},{"type":"model","id":"claude-haiku-4-5"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-haiku-4-5"}`)
		case "claude-haiku-4-5":
			io.WriteString(w, `{"data":[{"type":"model","id":"claude-3-haiku-20240307"}],"has_more":false,"first_id":"claude-3-haiku-20240307","last_id":"claude-3-haiku-20240307"}`)
		default:
			http.Error(w, "bad cursor", http.StatusBadRequest)
		}
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAnthropic) headersOK(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("x-api-key") != testKey {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		return false
	}
	if v := r.Header.Get("anthropic-version"); v != "2023-06-01" {
		f.t.Errorf("anthropic-version = %q", v)
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		f.t.Errorf("Authorization %q sent to Anthropic", auth)
	}
	return true
}

func (f *fakeAnthropic) lastBody() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return nil
	}
	return f.bodies[len(f.bodies)-1]
}

func newBackend(t *testing.T, url string, o Options) *Backend {
	t.Helper()
	o.Name, o.BaseURL = "claude", url
	if o.APIKey == "" {
		o.APIKey = testKey
	}
	if o.Now == nil {
		o.Now = fixedNow
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseEvents answers with Anthropic-style events ("event: NAME" then "data: JSON"),
// flushing each.
func sseEvents(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Request-Id", "req_123")
		for _, data := range events {
			var ev struct {
				Type string `json:"type"`
			}
			json.Unmarshal([]byte(data), &ev)
			io.WriteString(w, "event: "+ev.Type+"\ndata: "+data+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

func jsonAnswer(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_123")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// drain reads a stream to its end and closes it.
func drain(t *testing.T, s backends.Stream) ([]string, error) {
	t.Helper()
	defer s.Close()
	var out []string
	for {
		b, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
}

func streamBody(body string) string {
	return strings.Replace(body, `{"model"`, `{"stream":true,"stream_options":{"include_usage":true},"model"`, 1)
}

func asError(t *testing.T, err error) *backends.Error {
	t.Helper()
	var be *backends.Error
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T), want a *backends.Error", err, err)
	}
	return be
}

func background(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
