package enginetest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// post sends body to the server and decodes its 200 answer into out.
func post(t testing.TB, s *enginetest.LlamaServer, path, body string, out any) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, raw)
	}
}

func get(t testing.TB, s *enginetest.LlamaServer, path string, out any) {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// The server serves the tiny model under its alias, with the Hermes chat template
// the GGUF carries (which --jinja makes it use), and renders tools into the system
// turn with it.
func TestLlamaServer_ServesTheTinyModelWithItsTemplate(t *testing.T) {
	s := enginetest.Llama(t)

	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	get(t, s, "/v1/models", &models)
	if len(models.Data) != 1 || models.Data[0].ID != enginetest.TinyModelName {
		t.Errorf("/v1/models = %+v, want the one model %q", models.Data, enginetest.TinyModelName)
	}

	var props struct {
		ChatTemplate string `json:"chat_template"`
	}
	get(t, s, "/props", &props)
	for _, want := range []string{"<tool_call>", "<tools>", "<|im_start|>"} {
		if !strings.Contains(props.ChatTemplate, want) {
			t.Errorf("/props chat_template lacks %q:\n%.600s", want, props.ChatTemplate)
		}
	}

	var applied struct {
		Prompt string `json:"prompt"`
	}
	post(t, s, "/apply-template", `{"messages":[{"role":"user","content":"What is the weather in Paris?"}],`+
		`"tools":`+weatherTools+`}`, &applied)
	for _, want := range []string{
		"<|im_start|>system\n# Tools\n",
		`"name": "get_weather"`,
		"</tools>",
		"<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
	} {
		if !strings.Contains(applied.Prompt, want) {
			t.Errorf("applied template lacks %q:\n%s", want, applied.Prompt)
		}
	}
}

// The chat and tool-call markers are single special tokens, as in a real Hermes
// model, so a grammar trigger on <tool_call> is a token trigger.
func TestLlamaServer_ChatTokensAreSingleTokens(t *testing.T) {
	s := enginetest.Llama(t)
	for _, tok := range []string{"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"} {
		var out struct {
			Tokens []struct {
				ID    int    `json:"id"`
				Piece string `json:"piece"`
			} `json:"tokens"`
		}
		body, _ := json.Marshal(map[string]any{"content": tok, "with_pieces": true})
		post(t, s, "/tokenize", string(body), &out)
		if len(out.Tokens) != 1 || out.Tokens[0].Piece != tok {
			t.Errorf("%q tokenizes to %+v, want one token", tok, out.Tokens)
		}
	}
}

// A second completion that shares a long prefix with the first reuses it: cache_n
// counts the shared tokens, and only the new ones are computed.
func TestLlamaServer_CompletionReusesTheCachedPrefix(t *testing.T) {
	s := enginetest.Llama(t)
	var prefix bytes.Buffer
	for i := range 200 {
		prefix.WriteString("Line ")
		prefix.WriteString(strings.Repeat("x", i%7))
		prefix.WriteString(": the quick brown fox jumps over the lazy dog.\n")
	}
	type timings struct {
		CacheN  int `json:"cache_n"`
		PromptN int `json:"prompt_n"`
	}
	var first, second struct {
		Timings timings `json:"timings"`
	}
	for i, tail := range []string{"Summarize the text.", "Count the lines."} {
		body, _ := json.Marshal(map[string]any{
			"prompt": prefix.String() + tail, "n_predict": 2, "seed": 1, "cache_prompt": true,
		})
		out := &first
		if i == 1 {
			out = &second
		}
		post(t, s, "/completion", string(body), out)
	}
	if first.Timings.CacheN != 0 || first.Timings.PromptN < 2000 {
		t.Errorf("first request: cache_n %d, prompt_n %d; want 0 cached of a 2000+ token prompt", first.Timings.CacheN, first.Timings.PromptN)
	}
	total := first.Timings.PromptN
	if second.Timings.CacheN < total-16 || second.Timings.PromptN > 16 {
		t.Errorf("second request: cache_n %d, prompt_n %d; want all but the last few of %d tokens reused", second.Timings.CacheN, second.Timings.PromptN, total)
	}
	t.Logf("prompt of %d tokens; the second request reused %d and computed %d", total, second.Timings.CacheN, second.Timings.PromptN)
}
