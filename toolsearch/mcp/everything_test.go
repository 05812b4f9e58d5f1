package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/internal/nodetest"
	"github.com/maskgate/maskgate/toolsearch"
)

// The reference server @modelcontextprotocol/server-everything, pinned in
// testdata/node (package.json and package-lock.json), run over stdio with
// the Node.js that internal/nodetest provides.
const (
	everythingVersion = "2026.8.31"
	everythingMain    = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

// everythingTools is its listing, in its order, for a client that offers
// no roots, sampling or elicitation.
var everythingTools = []string{
	"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
	"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	"simulate-research-query",
}

func everything(t *testing.T) Config {
	t.Helper()
	node := nodetest.Node(t, "testdata/node")
	dir, err := filepath.Abs("testdata/node")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != everythingVersion {
		t.Fatalf("server-everything version %q (%v), want %s: run %s in %s", pkg.Version, err, everythingVersion, nodetest.NpmCI, dir)
	}
	return Config{Name: "everything", Command: node, Args: []string{everythingMain, "stdio"}, Dir: dir, Logger: testLogger(t)}
}

func TestEverything_Discovery(t *testing.T) {
	cfg := everything(t)
	a := start(t, cfg).Tools()
	if got, want := names(a), prefixed("everything_", everythingTools); !slices.Equal(got, want) {
		t.Fatalf("tools (%d) = %v\nwant (%d) %v", len(got), got, len(want), want)
	}
	b := start(t, cfg).Tools()
	for i := range a {
		if !bytes.Equal(a[i].Parameters, b[i].Parameters) || a[i].Description != b[i].Description {
			t.Errorf("%s differs between two Opens:\n%s\n%s", a[i].Name, a[i].Parameters, b[i].Parameters)
		}
		if a[i].Description == "" || a[i].Category != "everything" || len(a[i].Parameters) == 0 || a[i].Source != toolsearch.FromProfile {
			t.Errorf("tool %+v", a[i])
		}
	}
	sum := a[slices.Index(names(a), "everything_get-sum")]
	if want := `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"description":"First number","type":"number"},"b":{"description":"Second number","type":"number"}},"required":["a","b"],"type":"object"}`; string(sum.Parameters) != want {
		t.Errorf("get-sum parameters\n%s\nwant\n%s", sum.Parameters, want)
	}
	if sum.Description != "Returns the sum of two numbers" || !slices.Contains(sum.Keywords, "Get Sum Tool") {
		t.Errorf("get-sum: %q, keywords %q", sum.Description, sum.Keywords)
	}
	if _, err := toolsearch.New(a); err != nil {
		t.Errorf("toolsearch.New: %v", err)
	}
}

func TestEverything_Calls(t *testing.T) {
	t.Setenv("MASKGATE_TEST_SECRET", "sk-do-not-leak")
	cfg := everything(t)
	cfg.Env = map[string]string{"GIVEN_TO_SERVER": "yes"}
	s := start(t, cfg)

	call(t, s, "everything_echo", `{"message":"hi"}`, Result{Text: "Echo: hi"})
	call(t, s, "everything_get-sum", `{"a":1,"b":2.5}`, Result{Text: "The sum of 1 and 2.5 is 3.5."})
	call(t, s, "everything_get-tiny-image", ``, Result{Text: "Here's the image you requested:\n[image image/png, 4033 bytes]\nThe image above is the MCP logo."})

	r := s.Call(context.Background(), "everything_get-structured-content", []byte(`{"location":"Chicago"}`), "")
	var weather struct{ Temperature *float64 }
	if r.IsError || json.Unmarshal([]byte(r.Text), &weather) != nil || weather.Temperature == nil {
		t.Errorf("get-structured-content = %+v", r)
	}
	r = s.Call(context.Background(), "everything_get-resource-links", []byte(`{"count":2}`), "")
	if r.IsError || !strings.HasSuffix(r.Text, "\ndemo://resource/dynamic/blob/1\ndemo://resource/dynamic/text/2") {
		t.Errorf("get-resource-links = %+v", r)
	}
	r = s.Call(context.Background(), "everything_get-resource-reference", []byte(`{"resourceType":"Text","resourceId":1}`), "")
	if r.IsError || !strings.Contains(r.Text, "\nResource 1: This is a plaintext resource") {
		t.Errorf("get-resource-reference (an embedded resource) = %+v", r)
	}

	// The server sees a minimal environment plus Config.Env.
	r = s.Call(context.Background(), "everything_get-env", nil, "")
	var env map[string]string
	if err := json.Unmarshal([]byte(r.Text), &env); err != nil || r.IsError {
		t.Fatalf("get-env = %+v (%v)", r, err)
	}
	if env["GIVEN_TO_SERVER"] != "yes" || env["PATH"] == "" {
		t.Errorf("the server's environment lacks Config.Env or PATH: %v", env)
	}
	for k, v := range env {
		if v == "sk-do-not-leak" || !slices.Contains(inheritedEnv, k) && k != "GIVEN_TO_SERVER" {
			t.Errorf("the server inherited %s=%s", k, v)
		}
	}

	// The server's own failures come back as IsError with its message.
	callErr(t, s, "everything_echo", `{"message":5}`, "Input validation error")
	callErr(t, s, "everything_simulate-research-query", `{"topic":"x"}`, "task")
	call(t, s, "everything_echo", `{"message":"still fine"}`, Result{Text: "Echo: still fine"})
}

func TestEverything_Allow(t *testing.T) {
	cfg := everything(t)
	cfg.Allow = []string{"get-sum", "echo"}
	s := start(t, cfg)
	if got := names(s.Tools()); !slices.Equal(got, []string{"everything_echo", "everything_get-sum"}) {
		t.Errorf("tools %v", got)
	}
	call(t, s, "everything_get-sum", `{"a":2,"b":2}`, Result{Text: "The sum of 2 and 2 is 4."})
	callErr(t, s, "everything_get-env", ``, "not allowed")
}
