//go:build llamacpp

package embedded

import (
	"errors"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// The engine generates one choice: n above 1 is a 400 naming n, never one answer where
// several were asked for; n 1 or none is taken.
func TestParseRequest_RefusesNAboveOne(t *testing.T) {
	for _, body := range []string{`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":2}`, `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":5}`} {
		_, err := parseRequest([]byte(body))
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != 400 || be.Param != "n" {
			t.Errorf("%s: %v", body, err)
		}
	}
	for _, body := range []string{`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":1}`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`} {
		if _, err := parseRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
