package openai

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends/toolname"
)

var (
	wCommit = toolname.OpenAI.Wire("git.commit")
	wStatus = toolname.OpenAI.Wire("git.status")
)

func names(t *testing.T, real ...string) *Names {
	t.Helper()
	n, err := newNames(real)
	if err != nil || n == nil {
		t.Fatalf("newNames = %v, %v", n, err)
	}
	return n
}

func TestResponse_MapsCallNamesAndNothingElse(t *testing.T) {
	n := names(t, "git.commit", "get_weather")
	body := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"` + wCommit + ` is next","tool_calls":[` +
		`{"id":"a","type":"function","function":{"name":"` + wCommit + `","arguments":"{\"name\":\"` + wCommit + `\"}"}},` +
		`{"id":"b","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":2000,"completion_tokens":9,"total_tokens":2009,"prompt_tokens_details":{"cached_tokens":1920}}}`
	got, err := n.Response([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	// Only the name member changes: content and arguments mention the wire name and keep it.
	want := strings.Replace(body, `"name":"`+wCommit+`","arguments"`, `"name":"git.commit","arguments"`, 1)
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// fakeStream hands out chunks, then io.EOF, and counts how often it was asked.
type fakeStream struct {
	chunks []string
	calls  int
	closed bool
}

func (f *fakeStream) Next() ([]byte, error) {
	f.calls++
	if len(f.chunks) == 0 {
		return nil, io.EOF
	}
	c := f.chunks[0]
	f.chunks = f.chunks[1:]
	// Hand out memory the next call overwrites, as an SSE reader may.
	buf := []byte(c)
	return buf, nil
}

func (f *fakeStream) Close() error { f.closed = true; return nil }

func drain(t *testing.T, n *Names, chunks ...string) []string {
	t.Helper()
	s := n.Stream(&fakeStream{chunks: chunks})
	var out []string
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(c))
	}
}

func delta(calls string) string {
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[` + calls + `]},"finish_reason":null}]}`
}

func callNames(t *testing.T, chunks []string) map[int]string {
	t.Helper()
	got := map[int]string{}
	for _, c := range chunks {
		var ch chunkCalls
		if err := json.Unmarshal([]byte(c), &ch); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, choice := range ch.Choices {
			for _, tc := range choice.Delta.ToolCalls {
				if tc.Function.Name != nil {
					got[*tc.Index] += *tc.Function.Name
				}
			}
		}
	}
	return got
}

func TestStream_WholeNamesInTheFirstDeltaPassChunkForChunk(t *testing.T) {
	n := names(t, "git.commit", "get_weather")
	in := []string{
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`,
		delta(`{"index":0,"id":"a","type":"function","function":{"name":"` + wCommit + `","arguments":""}}`),
		delta(`{"index":0,"function":{"arguments":"{\"m\":1}"}}`),
		delta(`{"index":1,"id":"b","type":"function","function":{"name":"get_weather","arguments":""}}`),
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}
	f := &fakeStream{chunks: append([]string(nil), in...)}
	s := n.Stream(f)
	for i, want := range in {
		c, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			want = strings.Replace(want, wCommit, "git.commit", 1)
		}
		if string(c) != want {
			t.Errorf("chunk %d:\n got %s\nwant %s", i, c, want)
		}
		if f.calls != i+1 {
			t.Errorf("chunk %d held back: the upstream was asked %d times", i, f.calls)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end: %v", err)
	}
	s.Close()
	if !f.closed {
		t.Error("Close did not reach the upstream")
	}
}

func TestStream_NameInPiecesIsHeldUntilWhole(t *testing.T) {
	n := names(t, "git.commit", "git.status")
	half := len(wCommit) / 2
	for _, tc := range []struct {
		name   string
		chunks []string
	}{
		{"settled by the whole wire name", []string{
			delta(`{"index":0,"id":"a","type":"function","function":{"name":"` + wCommit[:half] + `"}}`),
			delta(`{"index":0,"function":{"name":"` + wCommit[half:] + `"}}`),
			delta(`{"index":0,"function":{"arguments":"{}"}}`),
		}},
		{"settled by the arguments", []string{
			delta(`{"index":0,"id":"a","type":"function","function":{"name":"` + wCommit[:3] + `"}}`),
			delta(`{"index":0,"function":{"name":"` + wCommit[3:half] + `"}}`),
			delta(`{"index":0,"function":{"name":"` + wCommit[half:] + `","arguments":"{"}}`),
			delta(`{"index":0,"function":{"arguments":"}"}}`),
		}},
		{"settled by the end of the stream", []string{
			delta(`{"index":0,"id":"a","type":"function","function":{"name":"` + wCommit[:half] + `"}}`),
			delta(`{"index":0,"function":{"name":"` + wCommit[half:] + `"}}`),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := drain(t, n, tc.chunks...)
			if len(out) != len(tc.chunks) {
				t.Fatalf("%d chunks out of %d", len(out), len(tc.chunks))
			}
			if got := callNames(t, out); got[0] != "git.commit" {
				t.Errorf("client assembles %q from %v", got[0], out)
			}
			for _, c := range out {
				if strings.Contains(c, "git_") {
					t.Errorf("a wire piece reached the client: %s", c)
				}
			}
		})
	}
}

func TestStream_PiecesThatCannotBecomeAMappedNamePassUnchanged(t *testing.T) {
	n := names(t, "git.commit")
	in := []string{
		delta(`{"index":0,"id":"a","type":"function","function":{"name":"git_"}}`), // may become git_commit_…
		delta(`{"index":0,"function":{"name":"log"}}`),                             // git_log cannot
	}
	f := &fakeStream{chunks: append([]string(nil), in...)}
	s := n.Stream(f)
	var out []string
	for range in {
		c, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(c))
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStream_ParallelCallsAndChoicesKeepTheirOwnNames(t *testing.T) {
	n := names(t, "git.commit", "git.status")
	out := drain(t, n,
		delta(`{"index":0,"id":"a","type":"function","function":{"name":"`+wStatus[:4]+`"}},{"index":1,"id":"b","type":"function","function":{"name":"`+wCommit+`"}}`),
		delta(`{"index":0,"function":{"name":"`+wStatus[4:]+`"}}`),
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	)
	if diff := cmp.Diff(map[int]string{0: "git.status", 1: "git.commit"}, callNames(t, out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStream_NilNamesIsTheUpstreamItself(t *testing.T) {
	f := &fakeStream{}
	if s := (*Names)(nil).Stream(f); s != f {
		t.Error("a request without mapped names got a wrapper")
	}
}

func FuzzStream(f *testing.F) {
	f.Add(delta(`{"index":0,"function":{"name":"`+wCommit[:5]+`"}}`), delta(`{"index":0,"function":{"name":"`+wCommit[5:]+`"}}`))
	f.Add(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"x"}}]}}]}`, `not json`)
	f.Add(`{"choices":"tool_calls"}`, `{"choices":[{"delta":{"tool_calls":[{"function":{"name":7}}]}}]}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		n, _ := newNames([]string{"git.commit", "fs.read"})
		s := n.Stream(&fakeStream{chunks: []string{a, b}})
		count := 0
		for {
			c, err := s.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err %v", err)
				}
				break
			}
			count++
			if json.Valid([]byte(a)) && json.Valid([]byte(b)) && !json.Valid(c) {
				t.Fatalf("valid chunks became %s", c)
			}
		}
		if count != 2 {
			t.Fatalf("%d chunks out of 2", count)
		}
	})
}

func FuzzRewrite(f *testing.F) {
	f.Add(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"a"}}]}}]}`)
	f.Add(`{"choices":[ {"message":{"tool_calls":[ {"function":{"name":"a"}} , 1 ]}} ]}`)
	f.Add(`[{"a":1}]`)
	f.Fuzz(func(t *testing.T, body string) {
		out, changed, err := rewrite([]byte(body), responsePath, func(_ []int, s string) (string, op) { return s + ".x", replace })
		if err != nil {
			return
		}
		if !changed && string(out) != body {
			t.Fatalf("unchanged but different: %s", out)
		}
		if changed && json.Valid([]byte(body)) && !json.Valid(out) {
			t.Fatalf("valid %s became %s", body, out)
		}
	})
}

func TestRewrite_KeepsSpacingAroundEditedElements(t *testing.T) {
	body := "{\"choices\": [ {\"message\":{\"tool_calls\":[\n  {\"function\":{\"name\":\"a\"}} ,\n  {\"function\":{\"name\":\"b\"}}]}} ]}"
	got, changed, err := rewrite([]byte(body), responsePath, func(pos []int, s string) (string, op) {
		if pos[1] == 1 {
			return s + ".x", replace
		}
		return s, keep
	})
	want := strings.Replace(body, `"b"`, `"b.x"`, 1)
	if err != nil || !changed || string(got) != want {
		t.Errorf("got %s (%v %v)\nwant %s", got, changed, err, want)
	}
}
