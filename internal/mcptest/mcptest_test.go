package mcptest

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	ServeIfChild()
	os.Exit(m.Run())
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, how := range []string{"stdio", "http"} {
		t.Run(how, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			var transport mcp.Transport
			var h *HTTPServer
			if how == "stdio" {
				command, args, env := StdioCommand(t)
				cmd := exec.Command(command, args...)
				cmd.Env = os.Environ()
				for k, v := range env {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				transport = &mcp.CommandTransport{Command: cmd}
			} else {
				h = HTTP(t)
				transport = &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: &http.Client{Transport: bearer{"Bearer t1"}}}
			}
			cs, err := c.Connect(ctx, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list := func() []string {
				var names []string
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if tool.Description == "" || tool.InputSchema == nil {
						t.Errorf("tool %q lacks a description or schema", tool.Name)
					}
					names = append(names, tool.Name)
				}
				return names
			}
			if got := list(); !slices.Equal(got, Tools) {
				t.Errorf("tools %v, want %v", got, Tools)
			}
			text := func(name string, args any, wantErr bool) string {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.IsError != wantErr || len(res.Content) != 1 {
					t.Fatalf("%s: %+v", name, res)
				}
				return res.Content[0].(*mcp.TextContent).Text
			}
			for _, tc := range []struct {
				name    string
				args    any
				want    string
				wantErr bool
			}{
				{"echo", map[string]any{"text": "hi"}, "hi", false},
				{"add", map[string]any{"a": 2, "b": 0.5}, "2.5", false},
				{"sleep", map[string]any{"ms": 1}, "slept", false},
				{"fail", nil, "failed on purpose", true},
				{"big", map[string]any{"n": 12}, "012345678901", false},
			} {
				if got := text(tc.name, tc.args, tc.wantErr); got != tc.want {
					t.Errorf("%s = %q, want %q", tc.name, got, tc.want)
				}
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "rpc_error"}); err == nil {
				t.Error("rpc_error: no error")
			}
			wantAuth := "(none)"
			if h != nil {
				wantAuth = "Bearer t1"
			}
			if got := text("auth", nil, false); got != wantAuth {
				t.Errorf("auth = %q, want %q", got, wantAuth)
			}

			if h != nil {
				if h.LastAuthorization() != "Bearer t1" || len(h.Authorizations()) == 0 || h.Requests() == 0 {
					t.Errorf("last Authorization %q", h.LastAuthorization())
				}
				h.AddTool("added")
			} else {
				text("add_tool", map[string]any{"name": "added"}, false)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no notifications/tools/list_changed")
			}
			if got := list(); !slices.Contains(got, "added") {
				t.Errorf("tools after adding one: %v", got)
			}
			if got := text("added", map[string]any{"text": "x"}, false); got != "x" {
				t.Errorf("added = %q", got)
			}
		})
	}
}

// TestCrash: over stdio the crash tool ends the process.
func TestCrash(t *testing.T) {
	command, args, env := StdioCommand(t)
	cmd := exec.Command(command, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash"}); err == nil {
		t.Error("crash answered")
	}
	cs.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("the server exited with %v, want status 3", cmd.ProcessState)
	}
}

// TestFixtures_StdioChildListsThemAfterItsOwnTools: a child asked for 60 fixtures lists
// the nine tools and 60 fixtures, each callable and answering with its text.
func TestFixtures_StdioChildListsThemAfterItsOwnTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	command, args, env := StdioCommand(t)
	cmd := exec.Command(command, args...)
	cmd.Env = append(os.Environ(), FixturesVar+"=60")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if len(names) != len(Tools)+60 {
		t.Fatalf("%d tools listed, want %d: %v", len(names), len(Tools)+60, names)
	}
	want := append(slices.Clone(Tools), FixtureNames()[:60]...)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather_get", Arguments: map[string]any{"text": "sunny"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "sunny" {
		t.Fatalf("weather_get: %+v, %v", res, err)
	}
}
