package gateway_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// TestIsolation_PropertyNothingCrossesIdentities drives random conversations of three
// keys through one gateway: random explicit thread ids (X-Thread-Id or
// metadata.thread_id, one kind), prompt_cache_key and user values drawn from small
// pools, so that identities collide on every one of them, and anonymous conversations
// (no id at all; fingerprinting on) that open with identical system and user messages
// across identities. Every request plants a secret in a hidden exchange and loads one of
// its identity's tools.
//
// The test keeps its own model of what may be shared: a thread is (identity, the first
// of header/metadata, prompt_cache_key, user, else the opening messages), as the README
// documents. For every prompt the upstream received it asserts that each secret in it
// was planted in the same modelled thread, that each tool in it is the caller's (its
// own profile tool or client tool, described as the caller described it) and was loaded
// in that thread, and — so that the property is not vacuous — that secrets and tools
// did carry over within threads. Some requests load cli_shared, the client tool every
// identity declares under the same name with its own description: it may be in a
// prompt only as the caller described it.
//
// The same run with the gateway's identity scoping switched off (gateway.UnscopeThreads)
// must show the leak that mutation makes, counted and predicted, not merely some
// failure: the model, filing threads with the identity dropped, says which of another
// identity's loaded profile tools each prompt would get, and the prompts get exactly
// those, from no other thread. (Hidden exchanges, with their secrets, are spliced only
// into the history they were made in, which another identity's client does not send:
// they are counted, not predicted.)
func TestIsolation_PropertyNothingCrossesIdentities(t *testing.T) {
	r := isolationRun(t, false, t.Errorf)
	t.Logf("%d prompts checked; %d carried an earlier secret of their thread, %d an earlier loaded tool, %d loaded cli_shared; %d requests shared their thread, identity aside, with another identity's loaded tools",
		r.checked, r.carried, r.loadedSeen, r.sharedLoads, r.exposed)
	if r.carried == 0 || r.loadedSeen == 0 || r.sharedLoads == 0 {
		t.Fatal("no secret or tool ever carried over within a thread, or cli_shared was never loaded: the test proves nothing")
	}
	// Identities must meet on the same thread ids, or scoping is never put to the test.
	if r.exposed == 0 {
		t.Fatal("no request shared its thread, identity aside, with another identity's loaded tools: the test proves nothing")
	}
	if r.leaked != 0 || r.foreignSecrets != 0 || r.foreignTools != 0 {
		t.Errorf("%d requests got %d secrets and %d tools of other identities", r.leaked, r.foreignSecrets, r.foreignTools)
	}
}

func TestIsolation_PropertyCatchesThreadsUnscoped(t *testing.T) {
	r := isolationRun(t, true, func(string, ...any) {})
	t.Logf("scoping removed: %d violations in %d prompts; %d requests got other identities' state (%d exposed), %d of their tools in prompts (%d predicted), %d secrets, %d from elsewhere",
		r.violations, r.checked, r.leaked, r.exposed, r.foreignTools, r.predictedTools, r.foreignSecrets, r.unexplained)
	if r.foreignTools == 0 {
		t.Fatal("with identity scoping removed no tool crossed identities: the property cannot see the leak")
	}
	// The leak is the one the mutation makes: every request exposed leaked, no other
	// did, each exactly the tools predicted, and nothing came from another thread.
	if r.leaked != r.exposed {
		t.Errorf("%d requests got other identities' state, want the %d whose thread, identity aside, held their loaded tools", r.leaked, r.exposed)
	}
	if r.foreignTools != r.predictedTools {
		t.Errorf("%d of other identities' tools in prompts, want the %d predicted", r.foreignTools, r.predictedTools)
	}
	if r.unexplained != 0 {
		t.Errorf("%d items crossed identities from elsewhere than the caller's thread with the identity dropped: not the mutation's leak", r.unexplained)
	}
}

// isolationResult counts a run: violations of the property; secrets and tools carried
// over within threads (the property is not vacuous); prompts checked. exposed are the
// requests whose thread, with the identity dropped, held another identity's loaded
// profile tools before them, and predictedTools how many of those tools their prompts
// would hold in all were threads filed without the identity. leaked are the requests
// whose prompts held another identity's secrets or tools, foreignSecrets and
// foreignTools how many, and unexplained those of them that identity had not put in the
// caller's thread with the identity dropped.
type isolationResult struct {
	violations, carried, loadedSeen, sharedLoads, checked int
	exposed, predictedTools                               int
	leaked, foreignSecrets, foreignTools, unexplained     int
}

// ownerOf is the identity whose own tool name is ("" for cli_shared, which all declare).
func ownerOf(name string) string {
	if who, _, ok := strings.Cut(name, "_tool_"); ok {
		return who
	}
	if who, ok := strings.CutSuffix(strings.TrimPrefix(name, "cli_"), "_own"); ok {
		return who
	}
	return ""
}

// identityOf splits a modelled thread, "who/thread", into the identity and the rest.
func identityOf(thread string) (who, rest string) {
	who, rest, _ = strings.Cut(thread, "/")
	return who, rest
}

// isolationRun drives the property's conversations, reporting each violation to fail
// and counting them; unscoped removes the gateway's identity scoping first.
func isolationRun(t *testing.T, unscoped bool, fail func(format string, args ...any)) isolationResult {
	const seeds, requests = 12, 40
	var res isolationResult
	errorf := func(format string, args ...any) {
		res.violations++
		fail(format, args...)
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 0x6d61736b))
		p := newPlanter(t)
		var mutate []func(*gateway.Server)
		if unscoped {
			mutate = append(mutate, gateway.UnscopeThreads)
		}
		gw := tenantGateway(t, p, testKeys(), true, mutate...)

		plantedIn := map[string]string{}          // secret → modelled thread
		loadedIn := map[string]map[string]bool{}  // modelled thread → tools loaded in it
		history := map[string][]string{}          // modelled thread → client messages so far
		bareLoads := map[string]map[string]bool{} // thread with the identity dropped → tools loaded in it
		pick := func(pool ...string) string { return pool[rng.IntN(len(pool))] }
		maybe := func(pool ...string) string {
			if rng.IntN(3) == 0 {
				return pick(pool...)
			}
			return ""
		}
		for n := range requests {
			who := pick("alice", "bob", "carol")
			header, metaID, cacheKey, user := maybe("t1", "t2"), maybe("t1", "t2"), maybe("t1", "p"), maybe("t1", "u")
			sys, first := pick("You are helpful.", "You code."), pick("hello", "list my repos")
			var thread string
			switch {
			case header != "":
				thread = "thread:" + header
			case metaID != "":
				thread = "thread:" + metaID
			case cacheKey != "":
				thread = "cache:" + cacheKey
			case user != "":
				thread = "user:" + user
			default:
				thread = "anon:" + sys + "|" + first
			}
			bare := thread
			thread = who + "/" + thread
			// Other identities' profile tools loaded in the thread, identity aside: what
			// a gateway that filed threads without the identity would put in this prompt.
			// (Their client tools it cannot: only the caller's request declares tools.)
			var theirs []string
			for name := range bareLoads[bare] {
				if owner := ownerOf(name); owner != "" && owner != who && !strings.HasPrefix(name, "cli_") {
					theirs = append(theirs, name)
				}
			}
			if len(theirs) > 0 {
				res.exposed++
			}
			msgs := history[thread]
			if msgs == nil {
				msgs = []string{systemMsg(sys), userMsg(first)}
			}
			secret := fmt.Sprintf("SECRET-%s-%d", who, n)
			tool := fmt.Sprintf("%s_tool_%02d", who, rng.IntN(8))
			switch rng.IntN(6) {
			case 0:
				tool = "cli_" + who + "_own"
			case 1:
				tool = "cli_shared"
				res.sharedLoads++
			}
			plant := userMsg("plant " + secret + " " + tool)
			var extra []string
			if metaID != "" {
				extra = append(extra, `"metadata":{"thread_id":`+jsonString(metaID)+`}`)
			}
			if cacheKey != "" {
				extra = append(extra, `"prompt_cache_key":`+jsonString(cacheKey))
			}
			if user != "" {
				extra = append(extra, `"user":`+jsonString(user))
			}
			headers := bearer(tenantKeys[who])
			if header != "" {
				headers["X-Thread-Id"] = header
			}
			before := p.n()
			status, _, body := send(t, "POST", gw.URL+"/v1/chat/completions", headers, chatBody(append(slices.Clone(msgs), plant), clientTools(who), extra...))
			if status != 200 {
				t.Fatalf("seed %d request %d (%s): %d %s", seed, n, thread, status, body)
			}
			plantedIn[secret] = thread
			calls := p.since(before)
			if len(calls) != 2 {
				// A spliced exchange from elsewhere can end the prompt and change the answer.
				errorf("seed %d request %d (%s): %d upstream calls, want 2 (plant, then answer)", seed, n, thread, len(calls))
			}
			leaked := false
			for i, c := range calls {
				res.checked++
				for _, s := range c.secrets {
					if from, fromBare := identityOf(plantedIn[s]); from != who {
						leaked = true
						res.foreignSecrets++
						if fromBare != bare {
							res.unexplained++
						}
					}
					if plantedIn[s] != thread {
						errorf("seed %d request %d (%s), call %d: secret %s planted in %s reached it", seed, n, thread, i, s, plantedIn[s])
					} else if s != secret {
						res.carried++
					}
				}
				for _, name := range c.tools {
					if meta.IsMeta(name) {
						continue
					}
					if owner := ownerOf(name); owner != "" && owner != who {
						leaked = true
						res.foreignTools++
						if !bareLoads[bare][name] {
							res.unexplained++
						}
					}
					if !strings.HasPrefix(name, who+"_") && name != "cli_"+who+"_own" && name != "cli_shared" {
						errorf("seed %d request %d (%s): %s's tool %s in its prompt", seed, n, thread, who, name)
					}
					if d := c.descs[name]; strings.HasPrefix(name, "cli_") && !strings.Contains(d, who) {
						errorf("seed %d request %d: tool %s described as %q", seed, n, name, d)
					}
					if !loadedIn[thread][name] && !(i == 1 && name == tool) {
						errorf("seed %d request %d (%s): tool %s was never loaded in this thread", seed, n, thread, name)
					} else if i == 0 {
						res.loadedSeen++
					}
				}
			}
			if leaked {
				res.leaked++
			}
			res.predictedTools += len(theirs) * len(calls)
			if bareLoads[bare] == nil {
				bareLoads[bare] = map[string]bool{}
			}
			bareLoads[bare][tool] = true
			if loadedIn[thread] == nil {
				loadedIn[thread] = map[string]bool{}
			}
			loadedIn[thread][tool] = true
			history[thread] = append(msgs, plant, assistantMsg("ok"))
		}
	}
	return res
}
