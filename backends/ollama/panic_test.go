package ollama

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// panickingBody yields one line of an answer, then panics on the next read, as a
// fault in a transport or a decoder would.
type panickingBody struct{ r io.Reader }

func (b *panickingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		panic("a fault while reading the answer")
	}
	return n, nil
}

func (b *panickingBody) Close() error { return nil }

type panickingTransport struct{}

func (panickingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	line := `{"message":{"role":"assistant","content":"Hel"},"done":false}` + "\n"
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Body: &panickingBody{r: strings.NewReader(line)}, Request: r}, nil
}

// TestStream_APanicInTheReaderIsAnError: the stream is read in a goroutine of its own,
// where no handler's recovery reaches; a panic there stopped the whole gateway. Now the
// stream ends with an error after the chunks read before it. (A call without a stream
// reads in the caller's goroutine, under the gateway's recovery.)
func TestStream_APanicInTheReaderIsAnError(t *testing.T) {
	b := newBackend(t, "http://ollama.invalid", Options{Transport: panickingTransport{}})
	resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(t, resp.Stream)
	if err == nil || err == io.EOF || !strings.Contains(err.Error(), "failed") {
		t.Errorf("stream end = %v, want an error saying the reading failed", err)
	}
	if len(got) != 2 {
		t.Errorf("got %d chunks before the end, want 2 (role, Hel)", len(got))
	}
}
