package workload

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRequest_SizesAndShape(t *testing.T) {
	for _, tt := range []struct {
		tools    int
		min, max int
	}{
		{FewTools, 1500, 2600},
		{ManyTools, 250_000, 350_000},
	} {
		for _, stream := range []bool{false, true} {
			body := Request(tt.tools, stream)
			if n := len(body); n < tt.min || n > tt.max {
				t.Errorf("Request(%d, %v) is %d bytes, want %d..%d", tt.tools, stream, n, tt.min, tt.max)
			}
			var req struct {
				Model    string            `json:"model"`
				Stream   bool              `json:"stream"`
				Messages []json.RawMessage `json:"messages"`
				Tools    []json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatalf("Request(%d, %v) is not JSON: %v", tt.tools, stream, err)
			}
			if req.Model != Model || req.Stream != stream || len(req.Tools) != tt.tools || len(req.Messages) == 0 {
				t.Errorf("Request(%d, %v) = model %q stream %v, %d tools, %d messages", tt.tools, stream, req.Model, req.Stream, len(req.Tools), len(req.Messages))
			}
		}
	}
}

func TestRequest_Deterministic(t *testing.T) {
	if !bytes.Equal(Request(ManyTools, true), Request(ManyTools, true)) {
		t.Error("two calls gave different bytes")
	}
}

func TestUpstream_AnswersByStreamFlag(t *testing.T) {
	srv := httptest.NewServer(Upstream())
	defer srv.Close()
	post := func(body []byte) (*http.Response, []byte) {
		t.Helper()
		resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, out
	}

	resp, out := post(Request(FewTools, false))
	if !bytes.Equal(out, Completion()) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("whole answer: %s %q", resp.Header.Get("Content-Type"), out)
	}
	if n := len(Completion()); n < 500 || n > 700 || !json.Valid(Completion()) {
		t.Errorf("Completion is %d bytes, valid JSON %v; want about 600 bytes of JSON", n, json.Valid(Completion()))
	}

	resp, out = post(Request(FewTools, true))
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(out) != StreamBytes() {
		t.Fatalf("stream answer: %s, %d bytes, want %d", resp.Header.Get("Content-Type"), len(out), StreamBytes())
	}
	events := strings.Split(strings.TrimSuffix(string(out), "\n\n"), "\n\n")
	if len(events) != StreamChunks+2 || events[len(events)-1]+"\n\n" != DoneFrame {
		t.Fatalf("stream has %d events ending %q; want %d chunks, usage and [DONE]", len(events), events[len(events)-1], StreamChunks)
	}
	for _, e := range events[:len(events)-1] {
		if !strings.HasPrefix(e, "data: ") || !json.Valid([]byte(strings.TrimPrefix(e, "data: "))) {
			t.Errorf("event is not a JSON data line: %q", e)
		}
	}
}
