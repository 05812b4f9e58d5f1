package llamacpp

import (
	"errors"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/internal/enginetest"
)

func TestContextTokens_ReadsProps(t *testing.T) {
	f := newFake(t)
	b := newTestBackend(t, f.URL, nil)
	f.props = `{"default_generation_settings":{"n_ctx":4096,"params":{}},"total_slots":1,"chat_template":""}`
	if n, err := b.ContextTokens(background(t)); n != 4096 || err != nil {
		t.Errorf("n_ctx 4096: %d, %v", n, err)
	}
	for _, props := range []string{`{"total_slots":1}`, `{"default_generation_settings":{"n_ctx":0}}`,
		`{"default_generation_settings":{"n_ctx":"4096"}}`, `{"default_generation_settings":null}`, `not json`} {
		f.props = props
		var be *backends.Error
		if n, err := b.ContextTokens(background(t)); n != 0 || !errors.As(err, &be) || be.Status != 502 {
			t.Errorf("props %s: %d, %v; want 0 and a 502", props, n, err)
		}
	}
}

// The real llama-server says the --ctx-size it was started with, one slot having it all.
func TestContextTokens_LlamaServer(t *testing.T) {
	s := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{CtxSize: 3072})
	b, err := New(Options{Name: "llama", BaseURL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := b.ContextTokens(background(t)); n != 3072 || err != nil {
		t.Errorf("--ctx-size 3072: %d, %v", n, err)
	}
}

// Whatever /props says, ContextTokens answers a positive window or a 502, never a panic.
func FuzzContextTokens(f *testing.F) {
	for _, s := range []string{`{"default_generation_settings":{"n_ctx":4096}}`, `{"default_generation_settings":{"n_ctx":-1}}`,
		`{"default_generation_settings":{"n_ctx":1e40}}`, `{"default_generation_settings":[]}`, `[]`, ``, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, props string) {
		fk := newFake(t)
		fk.props = props
		b := newTestBackend(t, fk.URL, nil)
		n, err := b.ContextTokens(background(t))
		var be *backends.Error
		if (err == nil) != (n > 0) || (err != nil && (!errors.As(err, &be) || be.Status != 502)) {
			t.Errorf("props %q: %d, %v", props, n, err)
		}
	})
}
