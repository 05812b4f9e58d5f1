package gateway

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
)

// FuzzEndpointHead: what the gateway reads of a passed endpoint's body, from any bytes,
// is either a client error (a 400 naming the problem) or a model that is the body's own
// non-empty string, with a stream only on completions; it never panics.
func FuzzEndpointHead(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":["a","b"]}`,
		`{"model":"m","prompt":"x","suffix":"y","stream":true,"stream_options":{"include_usage":false}}`,
		`{"model":"m","stream":null,"stream_options":null}`,
		`{"model":"\u006d","stream":"yes"}`,
		`{"model":7}`, `{"model":""}`, `{}`, `[]`, `{"model":"m",`, ``, `{"model":"m","stream_options":{"include_usage":1}}`,
		`{"model":"m","model":"n"}`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, body string, completions bool) {
		endpoint := backends.EndpointEmbeddings
		if completions {
			endpoint = backends.EndpointCompletions
		}
		h, err := readEndpointHead(endpoint, []byte(body))
		if err != nil {
			var re *oai.RequestError
			if !errors.As(err, &re) || re.Message == "" {
				t.Fatalf("%q: error %v is not a client error with a message", body, err)
			}
			return
		}
		var v struct {
			Model string `json:"model"`
		}
		if json.Unmarshal([]byte(body), &v) != nil {
			return // duplicate members and the like: encoding/json and the scanner may differ
		}
		if h.model == "" || h.model != v.Model {
			t.Fatalf("%q: model %q, encoding/json reads %q", body, h.model, v.Model)
		}
		if !completions && (h.stream || h.includeUsage) {
			t.Fatalf("%q: a stream on %s", body, endpoint)
		}
	})
}
