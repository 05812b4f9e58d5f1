package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// TestIntegration_RealOllama drives the backend against a real Ollama (built and started
// by enginetest) serving the tiny random-weight model. The model's text is noise, so the
// test holds what the engine guarantees: shapes, accounting, and the format constraint.
func TestIntegration_RealOllama(t *testing.T) {
	srv := enginetest.Ollama(t)
	b, err := New(Options{Name: "it", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	model := srv.Model

	t.Run("list_and_ping", func(t *testing.T) {
		if err := b.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		names, err := b.ListModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, model) }) {
			t.Errorf("models %v lack %q", names, model)
		}
	})

	t.Run("model_not_found", func(t *testing.T) {
		_, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody("no-such-model", `"max_tokens":4`), Model: "no-such-model"})
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != http.StatusNotFound || be.Code != "model_not_found" {
			t.Errorf("err = %v, want a model_not_found 404", err)
		}
	})

	t.Run("non_streaming", func(t *testing.T) {
		resp, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody(model, `"max_tokens":16,"seed":1,"temperature":0`), Model: model})
		if err != nil {
			t.Fatal(err)
		}
		var c oai.ChatCompletion
		if err := json.Unmarshal(resp.Body, &c); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion" || c.Model != model || len(c.Choices) != 1 {
			t.Fatalf("completion: %s", resp.Body)
		}
		ch := c.Choices[0]
		if ch.Message.Role != "assistant" || ch.Message.Content == nil || (ch.FinishReason != "stop" && ch.FinishReason != "length") {
			t.Errorf("choice: %s", resp.Body)
		}
		u := c.Usage
		if u == nil || u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.PromptTokensDetails == nil {
			t.Errorf("usage: %s", resp.Body)
		}
		if resp.Cache != backends.CacheEstimated {
			t.Errorf("cache = %q", resp.Cache)
		}
		t.Logf("non-streaming: %s", resp.Body)
	})

	t.Run("streaming", func(t *testing.T) {
		resp, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody(model, `"stream":true,"max_tokens":16,"seed":1,"temperature":0`), Model: model, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Stream.Close()
		var chunks []oai.Chunk
		for {
			data, err := resp.Stream.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var c oai.Chunk
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("chunk %s: %v", data, err)
			}
			chunks = append(chunks, c)
		}
		if len(chunks) < 3 {
			t.Fatalf("only %d chunks", len(chunks))
		}
		var text strings.Builder
		finishes := 0
		for i, c := range chunks[:len(chunks)-1] {
			if c.Object != "chat.completion.chunk" || len(c.Choices) != 1 || c.ID != chunks[0].ID {
				t.Fatalf("chunk %d: %+v", i, c)
			}
			if (c.Choices[0].Delta.Role != "") != (i == 0) {
				t.Errorf("chunk %d: role %q", i, c.Choices[0].Delta.Role)
			}
			if c.Choices[0].Delta.Content != nil {
				text.WriteString(*c.Choices[0].Delta.Content)
			}
			if c.Choices[0].FinishReason != nil {
				finishes++
			}
		}
		last := chunks[len(chunks)-1]
		if finishes != 1 || len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens == 0 {
			t.Errorf("%d finish chunks; last chunk %+v", finishes, last)
		}
		t.Logf("streamed %d chunks, %q", len(chunks), text.String())
	})

	t.Run("tools_sent", func(t *testing.T) {
		resp, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody(model, `"max_tokens":16,"seed":1,"tools":`+catalog(10)), Model: model})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Strategy != "remove" {
			t.Errorf("strategy = %q", resp.Strategy)
		}
		// The template renders the tools into the system turn: many more prompt tokens.
		var with, without oai.ChatCompletion
		json.Unmarshal(resp.Body, &with)
		plain, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody(model, `"max_tokens":4`), Model: model})
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(plain.Body, &without)
		if with.Usage.PromptTokens < without.Usage.PromptTokens+200 {
			t.Errorf("prompt tokens with ten tools %d, without %d: tools were not rendered", with.Usage.PromptTokens, without.Usage.PromptTokens)
		}
	})

	t.Run("required_call_constrained_to_two_of_ten", func(t *testing.T) {
		allowed := []string{"search_files", "read_file"}
		choice := `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"search_files"}},{"type":"function","function":{"name":"read_file"}}]}}`
		// Random weights under the format schema pad with whitespace and rarely close the
		// arguments object, and a loaded two-core machine decodes at 50-200 ms a token, so
		// most answers stop at max_tokens. The name comes first, and is what the test
		// holds: a whole name is allowed or disabled; an answer cut off before its name
		// closed is counted apart, never as allowed.
		// Ten seeds, each asked twice (constrained and not): 20 requests at about 7 s
		// each on a loaded two-core machine. Twenty seeds took 302 s for the same floors.
		const seeds = 10
		type tally struct{ allowed, cut, disabled int }
		// ask sends one seed with tool_choice and grades the name against allowed.
		ask := func(seed int, toolChoice string) (tally, int) {
			extra := fmt.Sprintf(`"max_tokens":32,"temperature":1,"seed":%d,"tools":%s,"tool_choice":%s`, seed, catalog(10), toolChoice)
			resp, err := b.ChatCompletion(ctx, &backends.Request{Body: chatBody(model, extra), Model: model})
			if err != nil {
				t.Fatalf("seed %d, tool_choice %s: %v", seed, toolChoice, err)
			}
			if resp.Strategy != "mask" {
				t.Errorf("seed %d: strategy %q, want mask (a format schema)", seed, resp.Strategy)
			}
			var c oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &c); err != nil {
				t.Fatal(err)
			}
			ch := c.Choices[0]
			var name string
			switch ch.FinishReason {
			case oai.FinishToolCalls:
				if len(ch.Message.ToolCalls) != 1 {
					t.Fatalf("seed %d: %d calls", seed, len(ch.Message.ToolCalls))
				}
				call := ch.Message.ToolCalls[0]
				if !json.Valid([]byte(call.Function.Arguments)) || !strings.HasPrefix(call.Function.Arguments, "{") {
					t.Errorf("seed %d: arguments %q", seed, call.Function.Arguments)
				}
				name = call.Function.Name
			case oai.FinishLength: // cut off inside the JSON: the name, once written, is graded
				if ch.Message.Content != nil {
					if m := calledName.FindStringSubmatch(*ch.Message.Content); m != nil {
						name = m[1]
					}
				}
			default:
				t.Fatalf("seed %d: finish %q: %s", seed, ch.FinishReason, resp.Body)
			}
			switch {
			case name == "":
				return tally{cut: 1}, c.Usage.PromptTokens
			case slices.Contains(allowed, name):
				return tally{allowed: 1}, c.Usage.PromptTokens
			}
			return tally{disabled: 1}, c.Usage.PromptTokens
		}

		// Unconstrained: tool_choice "required", so a call is still forced, with a format
		// schema whose enum is all ten names. Everything Ollama renders its prompt from
		// (messages, tools, options) is the same request for request; only the schema
		// differs.
		free := `"required"`
		if d := promptDiff(t, model, choice, free); d != "" {
			t.Fatalf("the two requests render different prompts: %s", d)
		}
		var mask, control tally
		for seed := range seeds {
			m, pm := ask(seed, choice)
			u, pu := ask(seed, free)
			if pm != pu {
				t.Errorf("seed %d: %d prompt tokens constrained, %d unconstrained: not the same prompt", seed, pm, pu)
			}
			if m.disabled > 0 {
				t.Errorf("seed %d: a call outside %v under the schema", seed, allowed)
			}
			mask.allowed, mask.cut, mask.disabled = mask.allowed+m.allowed, mask.cut+m.cut, mask.disabled+m.disabled
			control.allowed, control.cut, control.disabled = control.allowed+u.allowed, control.cut+u.cut, control.disabled+u.disabled
		}
		t.Logf("constrained to %v: %d allowed, %d cut off before the name, %d disabled; unconstrained, same prompt: %d allowed, %d cut off, %d outside %v",
			allowed, mask.allowed, mask.cut, mask.disabled, control.allowed, control.cut, control.disabled, allowed)
		if mask.allowed < seeds/2 {
			t.Errorf("only %d of %d seeds named a tool before max_tokens", mask.allowed, seeds)
		}
		// Two names of ten: a model that ignored the prompt would leave them 8 times in
		// 10; 3 of 10 is a floor far below that (seeds 0–19 left them 14 times in 20).
		if control.disabled < 3 {
			t.Errorf("unconstrained, only %d of %d seeds called outside %v: the constrained run proves nothing", control.disabled, seeds, allowed)
		}
	})

	t.Run("shared_prefix", func(t *testing.T) {
		// A backend of its own: a fresh estimator, so that earlier subtests do not count,
		// and a transport that keeps Ollama's timings.
		tap := &tapTransport{rt: http.DefaultTransport.(*http.Transport).Clone()}
		b, err := New(Options{Name: "it", BaseURL: srv.URL, Transport: tap})
		if err != nil {
			t.Fatal(err)
		}
		system := strings.Repeat("You are a careful assistant who answers in plain words. ", 120)
		ask := func(user string) (usage oai.Usage, final map[string]any) {
			body := fmt.Sprintf(`{"model":%q,"max_tokens":8,"seed":1,"messages":[{"role":"system","content":%q},{"role":"user","content":%q}]}`, model, system, user)
			resp, err := b.ChatCompletion(ctx, &backends.Request{Body: []byte(body), Model: model})
			if err != nil {
				t.Fatal(err)
			}
			var c oai.ChatCompletion
			if err := json.Unmarshal(resp.Body, &c); err != nil {
				t.Fatal(err)
			}
			return *c.Usage, tap.lastLine()
		}
		u1, r1 := ask("What is the capital of Norway?")
		u2, r2 := ask("And of Sweden?")
		t.Logf("first:  prompt %d tokens, estimated cached %d, prompt_eval_duration %v",
			u1.PromptTokens, u1.PromptTokensDetails.CachedTokens, time.Duration(num(r1["prompt_eval_duration"])))
		t.Logf("second: prompt %d tokens, estimated cached %d, prompt_eval_duration %v",
			u2.PromptTokens, u2.PromptTokensDetails.CachedTokens, time.Duration(num(r2["prompt_eval_duration"])))
		if u1.PromptTokensDetails.CachedTokens != 0 {
			t.Errorf("first request estimated %d cached tokens, want 0", u1.PromptTokensDetails.CachedTokens)
		}
		if c := u2.PromptTokensDetails.CachedTokens; c < u2.PromptTokens/2 || c >= u2.PromptTokens {
			t.Errorf("second request estimated %d of %d cached, want most of the shared system prompt", c, u2.PromptTokens)
		}
	})
}

// calledName is the name of a call written as text, closed.
var calledName = regexp.MustCompile(`^\s*\{\s*"name"\s*:\s*"([^"]*)"`)

// promptDiff says how the Ollama requests for two tool_choice values differ in what
// Ollama renders the prompt from (everything but format), or "" when they do not.
func promptDiff(t *testing.T, model, choiceA, choiceB string) string {
	t.Helper()
	render := func(choice string) string {
		tr, err := translateRequest(chatBody(model, fmt.Sprintf(`"max_tokens":32,"temperature":1,"seed":1,"tools":%s,"tool_choice":%s`, catalog(10), choice)), model)
		if err != nil {
			t.Fatal(err)
		}
		r := *tr.req
		r.Format = nil
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := render(choiceA), render(choiceB); a != b {
		return fmt.Sprintf("%s\nvs\n%s", a, b)
	}
	return ""
}

// chatBody is a one-turn chat request for model with extra members.
func chatBody(model, extra string) []byte {
	s := fmt.Sprintf(`{"model":%q,"messages":[{"role":"system","content":"You call tools."},{"role":"user","content":"Find the file named notes.txt and read it."}]`, model)
	if extra != "" {
		s += "," + extra
	}
	return []byte(s + "}")
}

// catalog is a JSON array of n distinct tools.
func catalog(n int) string {
	names := []string{"search_files", "read_file", "get_weather", "send_email", "create_event",
		"list_users", "delete_file", "translate_text", "get_stock_price", "run_query"}
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%q,"description":"Tool number %d: %s.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"What to act on"}},"required":["query"]}}}`,
			names[i%len(names)], i, strings.ReplaceAll(names[i%len(names)], "_", " "))
	}
	b.WriteByte(']')
	return b.String()
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// tapTransport keeps the last NDJSON line of each response, to read the engine's own
// timings that the OpenAI answer does not carry. It buffers whole bodies: use it for
// non-streaming requests.
type tapTransport struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	last []byte
}

func (tt *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tt.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	tt.mu.Lock()
	tt.last = lines[len(lines)-1]
	tt.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func (tt *tapTransport) lastLine() map[string]any {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var m map[string]any
	json.Unmarshal(tt.last, &m)
	return m
}
