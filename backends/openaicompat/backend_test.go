package openaicompat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
)

func TestNew_RefusesMissingOrRelativeURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8000/v1", "ftp://x/v1"} {
		if _, err := New(Options{Name: "b", BaseURL: u}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}

func TestChatCompletion_SendsBodyAndKeyAsGiven(t *testing.T) {
	var gotBody []byte
	var gotAuth, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.Path
		w.Header().Set("X-Request-Id", "req-7")
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer srv.Close()
	b, _ := New(Options{Name: "b", BaseURL: srv.URL + "/v1/", APIKey: "sk-1"})
	body := []byte(`{"model":"m",  "messages":[]}`)
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: body, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if string(gotBody) != string(body) || gotAuth != "Bearer sk-1" || gotPath != "/v1/chat/completions" {
		t.Errorf("upstream got body %q auth %q path %q", gotBody, gotAuth, gotPath)
	}
	if string(resp.Body) != `{"choices":[]}` || resp.Header.Get("X-Request-Id") != "req-7" {
		t.Errorf("response %q headers %v", resp.Body, resp.Header)
	}
}

func TestChatCompletion_StreamDeclaresReportedCacheWhenConfigured(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"a\":1}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, reports := range []bool{false, true} {
		b, _ := New(Options{Name: "b", BaseURL: srv.URL + "/v1", ReportsCache: reports})
		resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(`{}`), Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		want := backends.CacheSource("")
		if reports {
			want = backends.CacheReported
		}
		if resp.Cache != want {
			t.Errorf("ReportsCache=%v: Cache %q", reports, resp.Cache)
		}
		var got []string
		for {
			c, err := resp.Stream.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(c))
		}
		resp.Stream.Close()
		if diff := cmp.Diff([]string{`{"a":1}`}, got); diff != "" {
			t.Error(diff)
		}
	}
}

func TestChatCompletion_StreamingRequestAnsweredWithJSONIs502(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	b, _ := New(Options{Name: "b", BaseURL: srv.URL + "/v1"})
	_, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(`{}`), Stream: true})
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 502 || be.Code != "upstream_not_streaming" {
		t.Errorf("err %v", err)
	}
}

func TestChatCompletion_CallerCancelIsNotAnUpstreamError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // net/http notices a closed connection only once the body is read
		<-r.Context().Done()
	}))
	defer srv.Close()
	b, _ := New(Options{Name: "b", BaseURL: srv.URL + "/v1"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(`{}`)})
	var be *backends.Error
	if errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a caller's deadline became %v", err)
	}
}

func TestListModels_ReadsIDs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"a"},{"id":""},{"id":"b"}]}`)
	}))
	defer srv.Close()
	b, _ := New(Options{Name: "b", BaseURL: srv.URL + "/v1"})
	ids, err := b.ListModels(context.Background())
	if err != nil || cmp.Diff([]string{"a", "b"}, ids) != "" {
		t.Errorf("ids %v err %v", ids, err)
	}
}
