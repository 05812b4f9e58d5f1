package mcp

import (
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maskgate/maskgate/toolsearch"
)

func TestOpen_Validates(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // "" for valid
	}{
		{Config{Name: "git", Command: "git-mcp"}, ""},
		{Config{Name: "Linear-2", URL: "https://mcp.linear.app/mcp", ForwardAuth: true, Headers: map[string]string{"X-Key": "v"}}, ""},
		{Config{Name: "s", Command: "x", ForwardAuth: true}, ""}, // ignored for stdio
		{Config{Name: "", Command: "x"}, "name is empty"},
		{Config{Name: "a_b", Command: "x"}, "only ASCII letters, digits and '-'"},
		{Config{Name: "a.b", Command: "x"}, "only ASCII letters"},
		{Config{Name: "é", Command: "x"}, "only ASCII letters"},
		{Config{Name: strings.Repeat("a", 127), Command: "x"}, "longer than 126 bytes"},
		{Config{Name: "s"}, "set command (stdio) or url"},
		{Config{Name: "s", Command: "x", URL: "http://h/"}, "not both"},
		{Config{Name: "s", URL: "ftp://h/"}, "absolute http or https URL"},
		{Config{Name: "s", URL: "/mcp"}, "absolute http or https URL"},
		{Config{Name: "s", URL: "http://h/", Args: []string{"-v"}}, "command servers only"},
		{Config{Name: "s", URL: "http://h/", Env: map[string]string{"A": "b"}}, "command servers only"},
		{Config{Name: "s", Command: "x", Headers: map[string]string{"A": "b"}}, "url servers only"},
		{Config{Name: "s", URL: "http://h/", Headers: map[string]string{"A": "b\r\nInjected: 1"}}, "header"},
		{Config{Name: "s", URL: "http://h/", Headers: map[string]string{"A B": "c"}}, "header"},
		{Config{Name: "s", Command: "x", Env: map[string]string{"A=B": "c"}}, "env"},
		{Config{Name: "s", Command: "x", Timeout: -time.Second}, "negative"},
		{Config{Name: "s", Command: "x", Allow: []string{""}}, "empty tool name"},
	} {
		s, err := Open(tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Open(%+v): %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Open(%+v) = %v, want an error holding %q", tc.cfg, err, tc.want)
		}
		if s != nil {
			s.Close()
		}
	}
}

// TestChildEnv: a stdio server inherits only a minimal environment.
func TestChildEnv(t *testing.T) {
	t.Setenv("MASKGATE_TEST_SECRET", "sk-secret")
	t.Setenv("HOME", "/home/test")
	t.Setenv("TMPDIR", "/tmp/test")
	env := childEnv(map[string]string{"TOKEN": "given", "HOME": "/override"})
	for _, kv := range env {
		if strings.Contains(kv, "sk-secret") {
			t.Errorf("the child inherits %s", kv)
		}
	}
	for _, want := range []string{"TOKEN=given", "HOME=/override", "TMPDIR=/tmp/test"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
	if !slices.IsSorted(env) {
		t.Errorf("env %v is not sorted", env)
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("env %v lacks PATH", env)
	}
}

func TestAuthorization(t *testing.T) {
	for in, want := range map[string]string{
		"":            "",
		"  ":          "",
		"abc":         "Bearer abc",
		"Bearer abc":  "Bearer abc",
		"bearer  abc": "Bearer abc",
		" abc ":       "Bearer abc",
		"a\r\nX: y":   "",
	} {
		if got := authorization(in); got != want {
			t.Errorf("authorization(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"get-sum":      "get-sum",
		"fs.read_file": "fs.read_file",
		"a b/c:d":      "a_b_c_d",
		"héllo":        "h__llo",
		"Ünï":          "__n__",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConvert(t *testing.T) {
	obj := map[string]any{"type": "object", "properties": map[string]any{"z": map[string]any{"type": "string"}, "a": map[string]any{"type": "number"}}}
	listed := []*sdk.Tool{
		{Name: "read file", Description: "Reads.", InputSchema: obj},
		{Name: "read_file", Description: "Collides with the first after sanitizing."},
		{Name: "titled", Title: "Only A Title", InputSchema: obj},
		{Name: "annotated", Annotations: &sdk.ToolAnnotations{Title: "Annotation Title"}},
		{Name: strings.Repeat("x", 130), Description: "Too long."},
		{Name: "", Description: "No name."},
		{Name: "bad_schema", InputSchema: []any{1}},
		nil,
		{Name: "no_schema", Description: "No schema."},
	}
	var logs logBuffer
	l := convert("srv", listed, nil, logs.logger())
	want := []toolsearch.Tool{
		{Name: "srv_read_file", Description: "Reads.", Parameters: []byte(`{"properties":{"a":{"type":"number"},"z":{"type":"string"}},"type":"object"}`),
			Category: "srv", Origin: "mcp server srv tool read file"},
		{Name: "srv_titled", Description: "Only A Title", Parameters: []byte(`{"properties":{"a":{"type":"number"},"z":{"type":"string"}},"type":"object"}`),
			Category: "srv", Origin: "mcp server srv tool titled"},
		{Name: "srv_annotated", Description: "Annotation Title", Category: "srv", Origin: "mcp server srv tool annotated"},
		{Name: "srv_no_schema", Description: "No schema.", Category: "srv", Origin: "mcp server srv tool no_schema"},
	}
	// Titles are keywords, unless they are the description already.
	want[1].Keywords = []string{"Only A Title"}
	want[2].Keywords = []string{"Annotation Title"}
	if !sameTools(l.tools, want) {
		t.Errorf("tools:\n%+v\nwant\n%+v", l.tools, want)
	}
	for _, tool := range l.tools {
		if tool.Source != toolsearch.FromProfile {
			t.Errorf("%s: source %v", tool.Name, tool.Source)
		}
	}
	if e := l.ids["srv_read_file"]; e.name != "read file" || !e.allowed {
		t.Errorf("srv_read_file maps to %+v", e)
	}
	for _, want := range []string{"collides", "too long", "bad_schema"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
	if _, err := toolsearch.New(l.tools); err != nil {
		t.Errorf("toolsearch.New: %v", err)
	}

	// The allowlist picks by the server's own names, before collisions: an
	// allowed tool keeps its id even when a left-out one was listed first.
	l = convert("srv", listed, map[string]bool{"read_file": true, "no_schema": true}, logs.logger())
	if got := names(l.tools); !slices.Equal(got, []string{"srv_read_file", "srv_no_schema"}) {
		t.Errorf("allowed tools %v", got)
	}
	if e := l.ids["srv_read_file"]; e.name != "read_file" || !e.allowed {
		t.Errorf("srv_read_file maps to %+v", e)
	}
	if e, ok := l.ids["srv_titled"]; !ok || e.allowed {
		t.Errorf("srv_titled maps to %+v, %v: want a known tool, not allowed", e, ok)
	}
}
