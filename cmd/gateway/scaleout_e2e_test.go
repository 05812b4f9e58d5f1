package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// The scale-out picture of docs/scale-out.md, on real engines: two gateway instances
// behind a round-robin load balancer, in front of a router over two llama-server
// replicas. The router stands in for a session-affinity router (vLLM's production-stack
// router with --routing-logic session, the SGLang model gateway's consistent hashing):
// a request carrying the hint header goes to the replica its session was first given;
// one without it is spread round-robin. Both gateways share the thread salt, so one
// conversation carries one hint whichever instance serves a turn.

// affinityRouter proxies to replicas. With hintHeader set on a request, the session it
// names keeps the replica it was first given (new sessions take the replicas in turn);
// without it, each POST /completion goes to the next replica in turn and anything else
// (GET /props, POST /apply-template: stateless) to the first.
type affinityRouter struct {
	replicas   []string
	hintHeader string
	client     *http.Client

	mu       sync.Mutex
	sessions map[string]int
	nextNew  int // the replica the next new session gets
	nextRR   int // the replica the next unhinted /completion goes to
}

func (a *affinityRouter) pick(r *http.Request) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := r.Header.Get(a.hintHeader); s != "" {
		i, ok := a.sessions[s]
		if !ok {
			i = a.nextNew % len(a.replicas)
			a.nextNew++
			a.sessions[s] = i
		}
		return i
	}
	if r.URL.Path != "/completion" {
		return 0
	}
	i := a.nextRR % len(a.replicas)
	a.nextRR++
	return i
}

func (a *affinityRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := a.replicas[a.pick(r)]
	forward(w, r, target, a.client)
}

// forward relays r to target and the answer back.
func forward(w http.ResponseWriter, r *http.Request, target string, client *http.Client) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	relay(w, r, body, target, client, nil)
}

// roundRobin is the load balancer in front of the gateway instances: each request to the
// next one.
func roundRobin(t *testing.T, targets []string) *httptest.Server {
	var mu sync.Mutex
	next := 0
	client := &http.Client{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		target := targets[next%len(targets)]
		next++
		mu.Unlock()
		forward(w, r, target, client)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const scaleOutConfig = `backends:
  - name: llama
    kind: llamacpp
    url: ROUTER
    models: ["*"]
    timeout: 2m
ROUTING
thread_salt_env: MASKGATE_THREAD_SALT
`

// turnUsage is one turn's prompt and cached tokens, as the gateway reported them (the
// engine's cache_n).
type turnUsage struct{ prompt, cached int }

// converse runs conversations one after another through base, each of turns turns: a
// short system prompt of its own, then user messages long enough that a turn's prompt
// is mostly its history, and a fixed assistant reply sent back (the random model's own
// is noise). It returns each conversation's usage per turn.
func converse(t *testing.T, base, tag string, conversations, turns int) [][]turnUsage {
	t.Helper()
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven bright stars watch the quiet river bend past old stone bridges and green hills")
	out := make([][]turnUsage, conversations)
	for c := range conversations {
		msgs := []map[string]string{{"role": "system", "content": fmt.Sprintf("Conversation %s-%d. Answer briefly.", tag, c)}}
		for turn := range turns {
			var b strings.Builder
			for i := range 90 { // ~100 tokens, different in every turn and conversation
				fmt.Fprintf(&b, "%s%d ", words[(i*7+turn*3+c)%len(words)], (i+turn*13+c*31)%97)
			}
			msgs = append(msgs, map[string]string{"role": "user", "content": b.String()})
			body, _ := json.Marshal(map[string]any{"model": "tiny", "max_tokens": 2, "messages": msgs})
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Thread-Id", fmt.Sprintf("%s-%d", tag, c))
			resp, err := (&http.Client{}).Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s conversation %d turn %d: status %d: %s", tag, c, turn, resp.StatusCode, raw)
			}
			var got struct {
				Usage struct {
					PromptTokens        int `json:"prompt_tokens"`
					PromptTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("answer %.300s: %v", raw, err)
			}
			out[c] = append(out[c], turnUsage{got.Usage.PromptTokens, got.Usage.PromptTokensDetails.CachedTokens})
			msgs = append(msgs, map[string]string{"role": "assistant", "content": "ok"})
		}
	}
	return out
}

// previousShare is, for each turn after the first, the share of the previous turn's
// prompt that the engine took from its cache: 1 when the turn reached the replica
// holding its conversation, near 0 when it reached one that never saw it.
func previousShare(u []turnUsage) []float64 {
	var out []float64
	for i := 1; i < len(u); i++ {
		out = append(out, float64(u[i].cached)/float64(u[i-1].prompt))
	}
	return out
}

// TestScaleOut_RoutingHintKeepsEachConversationOnItsReplica: three conversations of four
// turns through two gateway instances behind a round-robin balancer. With
// routing.hint_header, every turn after the first reused at least 90 % of the previous
// turn's prompt from the engine's cache; without it the router spreads the turns, each
// turn lands on the replica that did not serve the one before, and the second turn of
// every conversation reuses less than 20 % of the first's prompt, the mean over turns 2-4
// less than 75 %.
func TestScaleOut_RoutingHintKeepsEachConversationOnItsReplica(t *testing.T) {
	replicas := []*enginetest.LlamaServer{enginetest.Llama(t), enginetest.Llama(t)}
	router := &affinityRouter{replicas: []string{replicas[0].URL, replicas[1].URL}, hintHeader: "X-Session-Id",
		client: &http.Client{}, sessions: map[string]int{}}
	rs := httptest.NewServer(router)
	t.Cleanup(rs.Close)
	env := map[string]string{"MASKGATE_THREAD_SALT": "scale-out-test-salt-0123456789abcdef"}

	cluster := func(routing string) string {
		yaml := strings.NewReplacer("ROUTER", rs.URL, "ROUTING", routing).Replace(scaleOutConfig)
		a, b := startRunEnv(t, yaml, nil, env), startRunEnv(t, yaml, nil, env)
		return roundRobin(t, []string{"http://" + a.addr, "http://" + b.addr}).URL
	}
	const conversations, turns = 3, 4

	spread := converse(t, cluster(""), "plain", conversations, turns)
	hinted := converse(t, cluster("    routing:\n      hint_header: x-session-id"), "hinted", conversations, turns)

	// One hint per conversation, whichever gateway served a turn: the shared salt.
	router.mu.Lock()
	sessions := len(router.sessions)
	router.mu.Unlock()
	if sessions != conversations {
		t.Errorf("the router saw %d sessions for %d conversations; each must carry one hint through both gateways", sessions, conversations)
	}
	for c := range conversations {
		shares := previousShare(hinted[c])
		for i, s := range shares {
			if s < 0.9 {
				t.Errorf("with the hint, conversation %d turn %d reused %.2f of the previous prompt from cache (%+v); want at least 0.90", c, i+2, s, hinted[c])
			}
		}
		t.Logf("with the hint, conversation %d: previous prompt cached %.2f", c, shares)
	}
	var sum float64
	var n int
	for c := range conversations {
		shares := previousShare(spread[c])
		if shares[0] >= 0.2 {
			t.Errorf("without the hint, conversation %d turn 2 reused %.2f of turn 1's prompt (%+v); the other replica never saw it: want under 0.20", c, shares[0], spread[c])
		}
		for _, s := range shares {
			sum += s
			n++
		}
		t.Logf("without the hint, conversation %d: previous prompt cached %.2f", c, shares)
	}
	if mean := sum / float64(n); mean >= 0.75 {
		t.Errorf("without the hint, turns 2-%d reused %.2f of the previous prompt on average; want under 0.75 (with it, at least 0.90 each)", turns, mean)
	}
}
