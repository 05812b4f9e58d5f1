package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/maskgate/maskgate/internal/nodetest"
)

// These tests run the official openai Node package (pinned in testdata/node) against the
// gateway through testdata/node/client.mjs. Node is a requirement of the test suite, as
// the README says: without it they fail with the command that fixes it (nodetest.Node).

const nodeDir = "testdata/node"

// runNode runs client.mjs for scenario against gw and returns its exit code and the JSON
// it printed, decoded.
func runNode(t *testing.T, node string, gw *testGateway, scenario string) (int, any) {
	t.Helper()
	return runNodeAt(t, node, gw.URL, scenario)
}

// runNodeAt is runNode against the gateway at baseURL, with extra environment
// (API_KEY, THREAD_ID).
func runNodeAt(t *testing.T, node, baseURL, scenario string, env ...string) (int, any) {
	t.Helper()
	var out any
	code := runNodeScript(t, node, "client.mjs", scenario, 15*time.Second, &out, append([]string{"BASE_URL=" + baseURL + "/v1"}, env...)...)
	return code, out
}

// runNodeScript runs script for scenario in nodeDir with env (and PATH, nothing else of
// the caller's: no OPENAI_*, ANTHROPIC_* or proxy variable reaches the SDKs), decodes
// the JSON summary it prints into out, and returns its exit code.
func runNodeScript(t *testing.T, node, script, scenario string, limit time.Duration, out any, env ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, scenario)
	cmd.Dir = nodeDir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "NODE_NO_WARNINGS=1"}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("node %s %s: %v\n%s", script, scenario, err, stderr.Bytes())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node %s %s exited %d without a JSON summary: %v\nstdout: %s\nstderr: %s", script, scenario, code, err, stdout.Bytes(), stderr.Bytes())
	}
	return code
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	return v
}

func TestSDK_Node_Scenarios(t *testing.T) {
	node := nodetest.Node(t, nodeDir)
	const ctxErr = `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	for _, tt := range []struct {
		name     string
		scenario string
		reply    http.HandlerFunc
		wantCode int
		want     string // the summary, as JSON
		// wantToolChoice, when set, is the tool_choice the upstream must get with both tools.
		wantToolChoice string
		// wantMsg, when set, must appear in the error's message, which want leaves out.
		wantMsg string
	}{
		{
			name: "text with cached tokens", scenario: "text", reply: replyJSON(200, completionJSON),
			want: `{"content":"hello","finish_reason":"stop","usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"cached_tokens":8}}`,
		},
		{
			name: "tool calls", scenario: "tools", reply: replyJSON(200, toolCallsJSON),
			want: `{"finish_reason":"tool_calls","tool_calls":[` +
				`{"id":"call_a","type":"function","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
				`{"id":"call_b","type":"function","name":"get_time","arguments":"{\"tz\":\"Europe/Paris\"}"}]}`,
			wantToolChoice: `"required"`,
		},
		{
			name: "stream text with usage", scenario: "stream-text", reply: replySSE(textStreamEvents, true),
			want: `{"deltas":["Hel","lo, wor","ld"],"content":"Hello, world","finish_reason":"stop",` +
				`"usage":{"prompt_tokens":21,"completion_tokens":4,"total_tokens":25,"cached_tokens":16}}`,
		},
		{
			name: "stream one tool call", scenario: "stream-tools", reply: replySSE(streamEvents, true),
			want: `{"arguments_done":[{"index":0,"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],"finish_reason":"tool_calls",` +
				`"tool_calls":[{"id":"call_1","type":"function","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],` +
				`"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"cached_tokens":24}}`,
			wantToolChoice: `{"type":"function","function":{"name":"get_weather"}}`,
		},
		{
			name: "stream two tool calls", scenario: "stream-tools", reply: replySSE(twoToolCallEvents, true),
			want: `{"arguments_done":[{"index":0,"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"},{"index":1,"name":"get_time","arguments":"{\"tz\": \"CET\"}"}],` +
				`"finish_reason":"tool_calls","tool_calls":[` +
				`{"id":"call_a","type":"function","name":"get_weather","arguments":"{\"city\": \"Oslo\"}"},` +
				`{"id":"call_b","type":"function","name":"get_time","arguments":"{\"tz\": \"CET\"}"}],` +
				`"usage":{"prompt_tokens":50,"completion_tokens":30,"total_tokens":80,"cached_tokens":null}}`,
			wantToolChoice: `{"type":"function","function":{"name":"get_weather"}}`,
		},
		{
			name: "upstream 400", scenario: "text", reply: replyJSON(http.StatusBadRequest, ctxErr), wantCode: 1,
			want: `{"error":{"class":"BadRequestError","status":400,"message":"This model's maximum context length is 8192 tokens.",` +
				`"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		},
		{
			name: "upstream 400 on a stream", scenario: "stream-text", reply: replyJSON(http.StatusBadRequest, ctxErr), wantCode: 1,
			want: `{"error":{"class":"BadRequestError","status":400,"message":"This model's maximum context length is 8192 tokens.",` +
				`"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		},
		{
			// The error arrives inside a 200 stream, so the SDK raises it without a status.
			name: "stream breaks", scenario: "stream-text", reply: breakAfter(textStreamEvents[:3]...), wantCode: 1,
			want:    `{"error":{"class":"APIError","status":null,"type":"upstream_error","param":null,"code":"upstream_truncated"}}`,
			wantMsg: "ended before it was complete",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tt.reply)
			gw := gatewayFor(t, up)
			code, got := runNode(t, node, gw, tt.scenario)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; summary %v", code, tt.wantCode, got)
			}
			if tt.wantMsg != "" {
				e, _ := got.(map[string]any)["error"].(map[string]any)
				if msg, _ := e["message"].(string); !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("error message %q does not say %q", msg, tt.wantMsg)
				}
				delete(e, "message")
			}
			if diff := cmp.Diff(decodeJSON(t, tt.want), got); diff != "" {
				t.Errorf("what the Node SDK parsed (-want +got):\n%s", diff)
			}
			if tt.wantToolChoice != "" {
				r := parseUpstreamRequest(t, up.lastBody())
				if diff := cmp.Diff([]string{"function:get_weather", "function:get_time"}, r.toolNames()); diff != "" {
					t.Errorf("upstream tools (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(decodeJSON(t, tt.wantToolChoice), decodeJSON(t, string(r.ToolChoice))); diff != "" {
					t.Errorf("upstream tool_choice (-want +got):\n%s", diff)
				}
			}
		})
	}
}
