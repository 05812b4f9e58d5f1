package llamacpp

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/toolcall"
)

// The shapes below follow llama-server's documentation (ggml-org/llama.cpp,
// tools/server/README.md):
//   - "POST /tokenize": options content (required), add_special (default false),
//     parse_special (default true), with_pieces (default false); the answer is
//     {"tokens": [ids]} or, with with_pieces, {"tokens": [{"id", "piece"}]} where "the
//     piece field is a string if the piece is valid unicode or a list of bytes otherwise"
//     (its example: 'á' on tinyllama/stories260k is [{"id":198,"piece":[195]},
//     {"id":164,"piece":[161]}]).
//   - "GET /props": "chat_template - the model's original Jinja2 prompt template".

func TestTokenize_PiecesAsStringsOrBytes(t *testing.T) {
	f := newFake(t)
	f.tokens = `{"tokens":[{"id":9906,"piece":"Hello"},{"id":198,"piece":[195]},{"id":164,"piece":[161]},{"id":128002,"piece":"<tool_call>"}]}`
	b := newTestBackend(t, f.URL, nil)
	got, err := b.Tokenize(background(t), "Hello á<tool_call>", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{{9906, []byte("Hello")}, {198, []byte{0xC3}}, {164, []byte{0xA1}}, {128002, []byte("<tool_call>")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	golden(t, "tokenize_pieces.json", f.last("/tokenize"))
}

func TestTokenize_IDsOnly(t *testing.T) {
	f := newFake(t)
	f.tokens = `{"tokens":[123,456,789]}`
	b := newTestBackend(t, f.URL, nil)
	got, err := b.Tokenize(background(t), "a <b> & c", false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Token{{ID: 123}, {ID: 456}, {ID: 789}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	golden(t, "tokenize.json", f.last("/tokenize"))
}

func TestTokenize_BadAnswersAre502(t *testing.T) {
	for _, answer := range []string{
		`{}`,
		`{"tokens":[{"piece":"x"}]}`,
		`{"tokens":[{"id":1,"piece":[256]}]}`,
		`{"tokens":[{"id":1,"piece":{"b":1}}]}`,
		`{"tokens":[1,2]}`, // asked for pieces, got ids
		`not json`,
	} {
		f := newFake(t)
		f.tokens = answer
		_, err := newTestBackend(t, f.URL, nil).Tokenize(background(t), "x", true)
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != 502 || be.Code != "upstream_bad_response" {
			t.Errorf("answer %s: err = %v", answer, err)
		}
	}
}

func TestChatTemplate_ReadsPropsAndDetects(t *testing.T) {
	f := newFake(t)
	f.props = `{"default_generation_settings":{"n_ctx":4096},"total_slots":1,"model_path":"m.gguf","chat_template":"{%- for m in messages %}[TOOL_CALLS]{{ m }}{% endfor %}","chat_template_caps":{},"build_info":"b1"}`
	b := newTestBackend(t, f.URL, nil)
	tmpl, err := b.ChatTemplate(background(t))
	if err != nil {
		t.Fatal(err)
	}
	if format, ok := toolcall.Detect(tmpl); !ok || format != toolcall.Mistral {
		t.Errorf("template %q detected as %q, %v", tmpl, format, ok)
	}
	f.props = `{"total_slots":1}`
	var be *backends.Error
	if _, err := b.ChatTemplate(background(t)); !errors.As(err, &be) || be.Status != 502 {
		t.Errorf("props without chat_template: %v", err)
	}
}
