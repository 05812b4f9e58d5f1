package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/tinymodel"
	"github.com/maskgate/maskgate/internal/enginetest"
)

// Reasoning through the doors, over a real llama-server serving the tiny model with
// tinymodel.ThinkingTemplate (--chat-template-file): its generation prompt opens a
// <think> block, as Qwen3's thinking templates, QwQ and DeepSeek-R1 do, unless
// enable_thinking is false. A proxy between the gateway and the engine makes the engine
// write the block's rest and an answer, by replacing each /completion's grammar with one
// that admits only that text (as agents_tools_test.go forces a call): the engine writes
// it token by token, and llama-server sends it as any output. Everything else — the
// template, the split of the block from the answer, each door's shape of it, the
// reasoning sent back in history and the switches — is the real thing.

const (
	thinkReasoning = "The user asks for a sum; two and two make four."
	thinkAnswer    = "It is four."
)

// thinkText is what the engine is made to write after prompt: the block's rest and the
// answer where the prompt opened the block, the answer alone where it did not.
func thinkText(prompt string) string {
	if strings.HasSuffix(prompt, "<think>\n") {
		return thinkReasoning + "\n</think>\n\n" + thinkAnswer
	}
	return thinkAnswer
}

// thinkingProxy forwards to target, replacing each /completion's grammar with one that
// admits only thinkText of its prompt; its log holds what the engine was sent.
func thinkingProxy(t *testing.T, target string) (*httptest.Server, *wireLog) {
	log := &wireLog{}
	client := &http.Client{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := log.arrive()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if r.URL.Path == "/completion" {
			body = forceThinkText(t, body)
		}
		relay(w, r, body, target, client, func(got []byte) {
			log.add(wireCall{seq: seq, method: r.Method, path: r.URL.Path, req: body, resp: got})
		})
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

func forceThinkText(t *testing.T, body []byte) []byte {
	raw, ok := oai.Get(body, "prompt")
	var prompt string
	if !ok || json.Unmarshal(raw, &prompt) != nil {
		t.Errorf("a /completion without a prompt: %.300s", body)
		return body
	}
	grammar, _ := json.Marshal("root ::= " + gbnfLiteral(thinkText(prompt)))
	for _, kv := range [][2]string{{"grammar", string(grammar)}, {"grammar_lazy", "false"}} {
		var err error
		if body, err = oai.Set(body, kv[0], []byte(kv[1])); err != nil {
			t.Errorf("forcing the text: %v", err)
		}
	}
	return body
}

// thinkingRig is llama-server with the thinking template behind the proxy, and the
// gateway in front.
func thinkingRig(t *testing.T) (base string, wire *wireLog) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "thinking.jinja")
	if err := os.WriteFile(path, []byte(tinymodel.ThinkingTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	ls := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{Args: []string{"--chat-template-file", path}})
	proxy, wire := thinkingProxy(t, ls.URL)
	base, _ = startGateway(t, strings.Replace(`backends:
  - name: llama
    kind: llamacpp
    url: URL
    models: ["*"]
    timeout: 2m
`, "URL", proxy.URL, 1), nil)
	return base, wire
}

// said is what a client read of one answer: its reasoning and its text.
type said struct{ reasoning, text string }

// sseData returns the data of each event of an SSE body, "[DONE]" left out.
func sseData(t *testing.T, raw []byte) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "[DONE]" {
			out = append(out, []byte(d))
		}
	}
	return out
}

// thinkDoor is one door as this test drives it: the request body for a user turn (and
// the history of an earlier one), and how a client reads its answers.
type thinkDoor struct {
	name, path string
	// body is a request asking ask, after history (the door's items for an earlier
	// user turn, its reasoning and its answer; empty for none), with extra members.
	body     func(history, ask, extra string, stream bool) string
	history  func(ask, reasoning, answer string) string
	whole    func(t *testing.T, raw []byte) said
	streamed func(t *testing.T, raw []byte) said
}

var thinkDoors = []thinkDoor{
	{
		name: "chat", path: "/v1/chat/completions",
		body: func(history, ask, extra string, stream bool) string {
			return `{"model":"tiny","max_tokens":64,"stream":` + jsonBool(stream) + extra + `,"messages":[` + history +
				`{"role":"user","content":` + jsonString(ask) + `}]}`
		},
		history: func(ask, reasoning, answer string) string {
			return `{"role":"user","content":` + jsonString(ask) + `},{"role":"assistant","content":` + jsonString(answer) +
				`,"reasoning_content":` + jsonString(reasoning) + `},`
		},
		whole: func(t *testing.T, raw []byte) said {
			var c oai.ChatCompletion
			if err := json.Unmarshal(raw, &c); err != nil || len(c.Choices) != 1 {
				t.Fatalf("answer %.400s: %v", raw, err)
			}
			m := c.Choices[0].Message
			s := said{}
			if m.Content != nil {
				s.text = *m.Content
			}
			if th := m.Thought(); th != nil {
				s.reasoning = *th
			}
			return s
		},
		streamed: func(t *testing.T, raw []byte) said {
			var r, c strings.Builder
			for _, d := range sseData(t, raw) {
				var ch oai.Chunk
				if err := json.Unmarshal(d, &ch); err != nil {
					t.Fatalf("chunk %s: %v", d, err)
				}
				if len(ch.Choices) == 0 {
					continue
				}
				if th := ch.Choices[0].Delta.Thought(); th != nil {
					r.WriteString(*th)
				}
				if ct := ch.Choices[0].Delta.Content; ct != nil {
					c.WriteString(*ct)
				}
			}
			return said{r.String(), c.String()}
		},
	},
	{
		name: "responses", path: "/v1/responses",
		body: func(history, ask, extra string, stream bool) string {
			return `{"model":"tiny","max_output_tokens":64,"store":false,"stream":` + jsonBool(stream) + extra + `,"input":[` + history +
				`{"role":"user","content":` + jsonString(ask) + `}]}`
		},
		history: func(ask, reasoning, answer string) string {
			return `{"role":"user","content":` + jsonString(ask) + `},` +
				`{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":` + jsonString(reasoning) + `}]},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + jsonString(answer) + `}]},`
		},
		whole:    func(t *testing.T, raw []byte) said { return responsesSaid(t, raw) },
		streamed: responsesStreamSaid,
	},
	{
		name: "messages", path: "/v1/messages",
		body: func(history, ask, extra string, stream bool) string {
			return `{"model":"tiny","max_tokens":64,"stream":` + jsonBool(stream) + extra + `,"messages":[` + history +
				`{"role":"user","content":` + jsonString(ask) + `}]}`
		},
		history: func(ask, reasoning, answer string) string {
			return `{"role":"user","content":` + jsonString(ask) + `},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":` + jsonString(reasoning) + `,"signature":"sig"},{"type":"text","text":` + jsonString(answer) + `}]},`
		},
		whole: func(t *testing.T, raw []byte) said {
			var m struct {
				Content []struct{ Type, Text, Thinking string } `json:"content"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("message %.400s: %v", raw, err)
			}
			var s said
			for i, b := range m.Content {
				switch b.Type {
				case "thinking":
					if i != 0 {
						t.Errorf("a thinking block at %d, after %+v", i, m.Content[:i])
					}
					s.reasoning += b.Thinking
				case "text":
					s.text += b.Text
				default:
					t.Errorf("a %q block", b.Type)
				}
			}
			return s
		},
		streamed: func(t *testing.T, raw []byte) said {
			var s said
			for _, d := range sseData(t, raw) {
				var ev struct {
					Type  string
					Delta struct{ Type, Text, Thinking string }
				}
				if err := json.Unmarshal(d, &ev); err != nil {
					t.Fatalf("event %s: %v", d, err)
				}
				if ev.Type != "content_block_delta" {
					continue
				}
				switch ev.Delta.Type {
				case "thinking_delta":
					s.reasoning += ev.Delta.Thinking
				case "text_delta":
					s.text += ev.Delta.Text
				}
			}
			return s
		},
	},
}

// responsesSaid reads a response object: its reasoning items' text and its messages'.
func responsesSaid(t *testing.T, raw []byte) said {
	t.Helper()
	var r struct {
		Output []struct {
			Type    string
			Content []struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("response %.400s: %v", raw, err)
	}
	var s said
	for _, it := range r.Output {
		for _, c := range it.Content {
			switch {
			case it.Type == "reasoning" && c.Type == "reasoning_text":
				s.reasoning += c.Text
			case it.Type == "message" && c.Type == "output_text":
				s.text += c.Text
			default:
				t.Errorf("a %q part in a %q item", c.Type, it.Type)
			}
		}
	}
	return s
}

// responsesStreamSaid reads a Responses stream's deltas, and checks that the completed
// response says the same.
func responsesStreamSaid(t *testing.T, raw []byte) said {
	t.Helper()
	var s said
	var done said
	completed := false
	for _, d := range sseData(t, raw) {
		var ev struct {
			Type     string
			Delta    string
			Response json.RawMessage
		}
		if err := json.Unmarshal(d, &ev); err != nil {
			t.Fatalf("event %s: %v", d, err)
		}
		switch ev.Type {
		case "response.reasoning_text.delta":
			s.reasoning += ev.Delta
		case "response.output_text.delta":
			s.text += ev.Delta
		case "response.completed":
			done, completed = responsesSaid(t, ev.Response), true
		}
	}
	if !completed || done != s {
		t.Errorf("response.completed says %+v (seen: %v); the deltas %+v", done, completed, s)
	}
	return s
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func jsonBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestReasoning_ThroughEveryDoor: the engine thinks (the template opened the block) and
// answers; each door, whole and streamed, gives the client the reasoning as its
// reasoning (Chat reasoning_content, a Responses reasoning item, a Messages thinking
// block) and the answer alone as its text. Sent back in the next turn's history, the
// reasoning reaches the template, which renders it inside <think></think> before the
// answer (the prompt the engine got says so). A client that turns reasoning off
// (reasoning_effort none, reasoning.effort none, thinking disabled) gets the template's
// closed block in the prompt, and then an answer with no reasoning.
func TestReasoning_ThroughEveryDoor(t *testing.T) {
	base, wire := thinkingRig(t)
	thinking := said{reasoning: thinkReasoning, text: thinkAnswer}
	for _, d := range thinkDoors {
		t.Run(d.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				read := d.whole
				if stream {
					read = d.streamed
				}
				from := wire.len()
				resp, raw := postJSON(t, base+d.path, d.body("", "What is two and two?", "", stream))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("stream %v: %d %.400s", stream, resp.StatusCode, raw)
				}
				if got := read(t, raw); got != thinking {
					t.Errorf("stream %v: read %+v, want %+v\n%.2000s", stream, got, thinking, raw)
				}
				if c := wire.await(t, from, "/completion", 1); !strings.HasSuffix(completionPrompt(t, c[0]), "<|im_start|>assistant\n<think>\n") {
					t.Errorf("stream %v: the prompt did not open the block: %q", stream, completionPrompt(t, c[0]))
				}
			}

			// The reasoning goes back in history: the template renders it.
			from := wire.len()
			history := d.history("What is two and two?", thinkReasoning, thinkAnswer)
			resp, raw := postJSON(t, base+d.path, d.body(history, "And three and three?", "", false))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("second turn: %d %.400s", resp.StatusCode, raw)
			}
			want := "<|im_start|>assistant\n<think>\n" + thinkReasoning + "\n</think>\n\n" + thinkAnswer + "<|im_end|>\n<|im_start|>user\nAnd three and three?"
			if p := completionPrompt(t, wire.await(t, from, "/completion", 1)[0]); !strings.Contains(p, want) {
				t.Errorf("second turn's prompt %q\nholds no %q", p, want)
			}
		})
	}
	off := map[string]string{
		"chat":      `,"reasoning_effort":"none"`,
		"responses": `,"reasoning":{"effort":"none"}`,
		"messages":  `,"thinking":{"type":"disabled"}`,
	}
	for _, d := range thinkDoors {
		t.Run(d.name+"/off", func(t *testing.T) {
			from := wire.len()
			resp, raw := postJSON(t, base+d.path, d.body("", "What is two and two?", off[d.name], false))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %.400s", resp.StatusCode, raw)
			}
			if got := d.whole(t, raw); got != (said{text: thinkAnswer}) {
				t.Errorf("read %+v, want the answer alone", got)
			}
			if p := completionPrompt(t, wire.await(t, from, "/completion", 1)[0]); !strings.HasSuffix(p, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
				t.Errorf("the prompt does not close the block: %q", p)
			}
		})
	}
}

// completionPrompt is the prompt of a /completion the engine was sent.
func completionPrompt(t *testing.T, c wireCall) string {
	t.Helper()
	var b struct{ Prompt string }
	if err := json.Unmarshal(c.req, &b); err != nil {
		t.Fatalf("/completion body %.300s: %v", c.req, err)
	}
	return b.Prompt
}
