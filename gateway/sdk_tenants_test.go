package gateway_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// TestSDK_TwoKeysOnOneThreadIdAreTwoThreads: alice, with the official Go SDK, plants a
// secret in a hidden exchange on X-Thread-Id t1; bob sends the same X-Thread-Id with
// his own key from the official Node SDK and from the Go SDK; neither of his prompts
// may hold her secret or her loaded tool, while her own next request does.
func TestSDK_TwoKeysOnOneThreadIdAreTwoThreads(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	p := newPlanter(t)
	gw := tenantGateway(t, p, testKeys(), false)
	goClient := func(key string) openai.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		return openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0),
			option.WithHeader("X-Thread-Id", "t1"), option.WithHTTPClient(&http.Client{Transport: tr}))
	}
	alice, bob := goClient(aliceKey), goClient(bobKey)
	ask := func(c openai.Client, text string) []upstreamCall {
		t.Helper()
		before := p.n()
		if _, err := c.Chat.Completions.New(sdkContext(t), openai.ChatCompletionNewParams{Model: "m1", Messages: userAsks(text)}); err != nil {
			t.Fatal(err)
		}
		return p.since(before)
	}
	leaked := func(calls []upstreamCall) bool {
		for _, c := range calls {
			if slices.Contains(c.secrets, "SECRET-alice-1") || slices.Contains(c.tools, "alice_tool_01") {
				return true
			}
		}
		return false
	}

	ask(alice, "plant SECRET-alice-1 alice_tool_01")

	before := p.n()
	code, out := runNodeAt(t, node, gw.URL, "text", "API_KEY="+bobKey, "THREAD_ID=t1")
	if code != 0 {
		t.Fatalf("node client as bob: exit %d: %v", code, out)
	}
	if calls := p.since(before); len(calls) == 0 || leaked(calls) {
		t.Errorf("bob's Node client on t1 reached the upstream %d times, leaked: %v", len(calls), leaked(calls))
	}
	if calls := ask(bob, "hello"); leaked(calls) {
		t.Error("bob's Go client on t1 got alice's secret or tool")
	}
	if calls := ask(alice, "hello again"); !leaked(calls) {
		t.Error("alice's own thread t1 lost her exchange: the test would prove nothing")
	}
	// A Node client without a key is refused.
	code, out = runNodeAt(t, node, gw.URL, "text", "THREAD_ID=t1")
	if code != 1 {
		t.Errorf("node client without a key: exit %d, %v", code, out)
	}
}
