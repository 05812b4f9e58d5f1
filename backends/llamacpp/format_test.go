package llamacpp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/masking"
)

const answerSchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`

// TestResponseFormat_AnswerGrammar: response_format holds the whole output to the
// schema's grammar in /completion (not lazy), the prompt is the same bytes as without
// it, and a call the tools allow is asked of the GrammarFunc with the answer beside it.
func TestResponseFormat_AnswerGrammar(t *testing.T) {
	want, err := masking.NewAnswer([]byte(answerSchema))
	if err != nil {
		t.Fatal(err)
	}
	rf := `,"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":` + answerSchema + `}}`
	f := newFake(t, `{"city":"Oslo"}`)
	b := newTestBackend(t, f.URL, nil)
	plain := `{"model":"m","messages":[{"role":"user","content":"hi"}]`
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(plain + `}`)}); err != nil {
		t.Fatal(err)
	}
	tmplPlain := f.last("/apply-template")
	if bytes.Contains(f.last("/completion"), []byte(`"grammar"`)) {
		t.Fatalf("a grammar without response_format: %s", f.last("/completion"))
	}
	resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(plain + rf + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.last("/apply-template"); !bytes.Equal(got, tmplPlain) {
		t.Errorf("response_format moved the prompt:\n%s\nwas\n%s", got, tmplPlain)
	}
	var sent struct {
		Grammar *string `json:"grammar"`
		Lazy    *bool   `json:"grammar_lazy"`
	}
	if err := json.Unmarshal(f.last("/completion"), &sent); err != nil || sent.Grammar == nil || *sent.Grammar != want.GBNF() || sent.Lazy == nil || *sent.Lazy {
		t.Errorf("/completion body %s: want the answer's grammar, not lazy", f.last("/completion"))
	}
	if !bytes.Contains(resp.Body, []byte(`"content":"{\"city\":\"Oslo\"}"`)) {
		t.Errorf("answer %s", resp.Body)
	}

	// Tools beside it: the GrammarFunc is told the answer; tool_choice none: the answer alone.
	var got GrammarRequest
	b = newTestBackend(t, f.URL, func(r GrammarRequest) (json.RawMessage, error) { got = r; return fakeGrammar(r) })
	withTools := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(withTools + rf + `}`)}); err != nil {
		t.Fatal(err)
	}
	if got.Answer == nil || got.Answer.GBNF() != want.GBNF() || got.Required {
		t.Errorf("grammar request %+v: want the answer beside optional calls", got)
	}
	got = GrammarRequest{}
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(withTools + `,"tool_choice":"none"` + rf + `}`)}); err != nil {
		t.Fatal(err)
	}
	if got.Answer != nil || !strings.Contains(string(f.last("/completion")), `"grammar":"root ::= ans\n`) {
		t.Errorf("tool_choice none: grammar request %+v, body %s", got, f.last("/completion"))
	}
}

// TestResponseFormat_Refusals: a keyword the grammar cannot hold, and an answer beside
// calls no grammar expresses, are 400s on response_format before anything is sent.
func TestResponseFormat_Refusals(t *testing.T) {
	f := newFake(t, "x")
	for _, c := range []struct {
		grammar GrammarFunc
		body    string
		has     string
	}{
		{fakeGrammar, `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"n":{"type":"integer","maximum":9}}}}}}`, `"maximum" at n`},
		{nil, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + `,"response_format":{"type":"json_object"}}`, "no grammar here expresses"},
	} {
		b := newTestBackend(t, f.URL, c.grammar)
		_, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(c.body)})
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != 400 || be.Param != "response_format" || !strings.Contains(be.Message, c.has) {
			t.Errorf("%s: got %v, want a 400 on response_format saying %s", c.body, err, c.has)
		}
	}
	if n := len(f.bodies["/completion"]); n != 0 {
		t.Errorf("%d generations were sent for refused requests", n)
	}
}

// TestResponseFormat_ClosesAnOpenThinkBlock: where the prompt opened a reasoning block,
// the answer's grammar first closes it, so the answer comes back as content; beside
// optional calls the same; with a closed or no block the grammar is the answer's alone.
func TestResponseFormat_ClosesAnOpenThinkBlock(t *testing.T) {
	f := newFake(t, "</think>\n\n", `{"city":"Oslo"}`)
	f.prompt = testPrompt + "<think>\n"
	rf := `,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":` + answerSchema + `}}`
	b := newTestBackend(t, f.URL, grammarForTest)
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]` + rf + `}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + rf + `}`,
	} {
		resp, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		var sent struct{ Grammar string }
		json.Unmarshal(f.last("/completion"), &sent)
		if !strings.HasPrefix(sent.Grammar, `root ::= "</think>\n\n" ( `) {
			t.Errorf("grammar %q does not close the block first", sent.Grammar)
		}
		var c struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if json.Unmarshal(resp.Body, &c); len(c.Choices) != 1 || c.Choices[0].Message.Content != `{"city":"Oslo"}` {
			t.Errorf("answer %s", resp.Body)
		}
	}
	f.prompt = testPrompt + "<think>\n\n</think>\n\n"
	if _, err := b.ChatCompletion(background(t), &backends.Request{Body: []byte(`{"model":"m","messages":[]` + rf + `}`)}); err != nil {
		t.Fatal(err)
	}
	var sent struct{ Grammar string }
	json.Unmarshal(f.last("/completion"), &sent)
	if !strings.HasPrefix(sent.Grammar, "root ::= ans\n") {
		t.Errorf("a closed block: grammar %q", sent.Grammar)
	}
}

// grammarForTest is a GrammarFunc that answers with masking's calls-or-answer grammar
// for a Hermes catalog of the request's tools, as cmd/gateway's grammarFor does.
func grammarForTest(r GrammarRequest) (json.RawMessage, error) {
	cat := masking.NewCatalog(map[string]json.RawMessage{"get_weather": nil, "search": nil})
	spec := masking.Spec{Format: masking.Hermes(), Allowed: r.Allowed}
	if r.Answer == nil || r.Required {
		spec.Mode = masking.ModeRequired
		g, err := cat.GBNF(spec)
		if err != nil {
			return nil, err
		}
		return json.Marshal(g)
	}
	g, err := cat.GBNFOrAnswer(spec, r.Answer)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}
