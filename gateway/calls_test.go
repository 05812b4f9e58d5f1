package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/backends"
)

// callName finds a called name in text; a call cut off by max_tokens inside its name
// leaves it unclosed.
var callName = regexp.MustCompile(`"name"\s*:\s*"([^"]*)("?)`)

// namesInText returns the names of the calls written in text (an answer whose call could
// not be parsed, e.g. cut off by max_tokens), an unclosed one with a trailing "…".
func namesInText(text string) []string {
	var out []string
	for _, sub := range callName.FindAllStringSubmatch(text, -1) {
		if sub[2] == "" {
			sub[1] += "…"
		}
		out = append(out, sub[1])
	}
	return out
}

// A verdict is how one called name compares with the set the test allowed.
type verdict int

const (
	// callAllowed: the whole name, in the set.
	callAllowed verdict = iota
	// callTruncated: cut off by max_tokens inside the name ("…"), and the start of a
	// name in the set. It breaks no rule, but it is no evidence that the constraint held
	// either, so it is never counted as an allowed call.
	callTruncated
	// callDisabled: a name outside the set, or a cut-off one that starts none in it.
	callDisabled
)

// judgeCall grades the called name n against allowed, the set the test itself chose.
func judgeCall(allowed []string, n string) verdict {
	cut, truncated := strings.CutSuffix(n, "…")
	if !truncated {
		if slices.Contains(allowed, n) {
			return callAllowed
		}
		return callDisabled
	}
	for _, a := range allowed {
		if strings.HasPrefix(a, cut) {
			return callTruncated
		}
	}
	return callDisabled
}

// engineAnswer is what a backend's whole answer says: the names it called (tool calls,
// or calls left as text) and its prompt and cached tokens.
type engineAnswer struct {
	called         []string
	prompt, cached int
	body           string
}

func readAnswer(body []byte) (engineAnswer, error) {
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		return engineAnswer{}, fmt.Errorf("unreadable answer %.200s: %v", body, err)
	}
	a := engineAnswer{prompt: c.Usage.PromptTokens, cached: c.Usage.PromptTokensDetails.CachedTokens, body: string(body)}
	m := c.Choices[0].Message
	for _, tc := range m.ToolCalls {
		a.called = append(a.called, tc.Function.Name)
	}
	if m.Content != nil {
		a.called = append(a.called, namesInText(*m.Content)...)
	}
	return a, nil
}

// Seed runs: ten loaded sets of seedsPerSet seeds each. Three seeds a set hold what a
// set is checked for (one prompt, the cache reused across the set's change) at 30
// engine requests; ten a set cost 100 requests for the same assertions.
const (
	seedsPerSet = 3
	seedSets    = 10
	seedRun     = seedsPerSet * seedSets
)

// seedGroup is the loaded set and thread of a seed in the seed runs: the set changes
// every seedsPerSet seeds, 1–3 tools among bigCatalog's prefix-sharing misc_tool_NN names.
func seedGroup(prefix string, seed int) (loaded []string, thread string) {
	group := seed / seedsPerSet
	loaded = []string{fmt.Sprintf("misc_tool_%02d", group), fmt.Sprintf("misc_tool_%02d", group+10)}[:1+group%2]
	if group%3 == 2 {
		loaded = append(loaded, "slack_send_message")
	}
	return loaded, fmt.Sprintf("%s-%d", prefix, group)
}

// forcedAmong is a request body forcing a call among names (allowed_tools, required).
func forcedAmong(model string, names []string, maxTokens, seed int) string {
	choice := make([]string, len(names))
	for i, n := range names {
		choice[i] = fmt.Sprintf(`{"type":"function","function":{"name":%q}}`, n)
	}
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"system","content":"You are an agent with tools."},{"role":"user","content":"do it"}],`+
		`"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[%s]}},"max_tokens":%d,"seed":%d,"temperature":1.0}`,
		model, strings.Join(choice, ","), maxTokens, seed)
}

// seedRound is what an engine did in one backend call of a seed run, recorded before
// the gateway's own check could hide a stray call.
type seedRound struct {
	sent    backends.Request  // as the gateway sent it; Body is a copy
	allowed []string          // Request.Allowed
	hash    [sha256.Size]byte // of what the engine's prompt is built from
	engineAnswer
}

// recorder wraps a backend and records a seedRound per call; prompt returns the bytes
// the round's hash is taken over (the rendered prompt, or the tools sent).
type recorder struct {
	backends.Backend
	prompt func(*backends.Request) ([]byte, error)
	mu     sync.Mutex
	rounds []seedRound
}

// ConstrainsTools passes the wrapped backend's ability on, so the gateway picks the
// strategy it would without the recorder.
func (o *recorder) ConstrainsTools() bool {
	c, ok := o.Backend.(backends.ToolConstrainer)
	return ok && c.ConstrainsTools()
}

func (o *recorder) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	p, err := o.prompt(req)
	if err != nil {
		return nil, err
	}
	resp, err := o.Backend.ChatCompletion(ctx, req)
	if err != nil {
		return nil, err
	}
	a, err := readAnswer(resp.Body)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	sent := *req
	sent.Body = bytes.Clone(req.Body)
	o.rounds = append(o.rounds, seedRound{sent: sent, allowed: req.Allowed, hash: sha256.Sum256(p), engineAnswer: a})
	o.mu.Unlock()
	return resp, nil
}

// seedSummary is what checkSeedRounds found.
type seedSummary struct {
	// allowed, truncated and disabled count the names called, by verdict.
	allowed, truncated, disabled int
	hashes                       int
	cached, prompts              int // over every round but the first
}

func (s seedSummary) calls() int { return s.allowed + s.truncated + s.disabled }

// checkSeedRounds grades every name each round called against loaded(i), the set the
// test chose for round i (never the one the gateway computed: a gateway that widened it
// would grade itself), fails the test for a disabled call or a round that named no tool,
// and sums the rest.
func checkSeedRounds(t *testing.T, rounds []seedRound, loaded func(i int) []string) seedSummary {
	t.Helper()
	var s seedSummary
	hashes := map[[sha256.Size]byte]bool{}
	for i, r := range rounds {
		hashes[r.hash] = true
		if len(r.called) == 0 {
			t.Errorf("seed %d: a forced call named nothing: %.400s", i, r.body)
		}
		for _, n := range r.called {
			switch judgeCall(loaded(i), n) {
			case callAllowed:
				s.allowed++
			case callTruncated:
				s.truncated++
			default:
				s.disabled++
				t.Errorf("seed %d: the engine called %q; the test loaded %v", i, n, loaded(i))
			}
		}
		if i > 0 {
			s.cached += r.cached
			s.prompts += r.prompt
		}
	}
	s.hashes = len(hashes)
	return s
}

// The seed tests' grading: a name cut off inside (its text ends in the unclosed "…")
// counts apart from allowed calls even when it starts an allowed name.
func TestJudgeCall_CutOffNamesAreNeverAllowed(t *testing.T) {
	loaded := []string{"misc_tool_01", "misc_tool_11"}
	for _, c := range []struct {
		text string
		want verdict
	}{
		{`{"name": "misc_tool_01", "arguments": {}}`, callAllowed},
		{`{"name": "misc_tool_11"`, callAllowed},
		{`{"name": "misc_tool_0`, callTruncated},
		{`{"name": "`, callTruncated},
		{`{"name": "misc_tool_02"}`, callDisabled},
		{`{"name": "misc_tool_0"}`, callDisabled}, // closed: a whole name, and not loaded
		{`{"name": "misc_tool_2`, callDisabled},
		{`{"name": "misc_tool_011`, callDisabled},
	} {
		names := namesInText(c.text)
		if len(names) != 1 {
			t.Fatalf("%s: names %q, want one", c.text, names)
		}
		if got := judgeCall(loaded, names[0]); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.text, got, c.want)
		}
	}
}
