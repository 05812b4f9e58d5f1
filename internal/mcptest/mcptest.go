package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvVar marks the re-executed test binary that serves MCP over stdio.
const EnvVar = "MASKGATE_MCPTEST_SERVER"

// FixturesVar, in the stdio child's environment, asks for that many fixture
// tools besides Tools (at most len(FixtureNames())): a catalog of the size an
// agent's MCP servers bring, for clients that defer them.
const FixturesVar = "MASKGATE_MCPTEST_FIXTURES"

// Tools are the names of the tools every server starts with, in listing
// order (the SDK lists tools sorted by name).
var Tools = []string{"add", "add_tool", "auth", "big", "crash", "echo", "fail", "rpc_error", "sleep"}

// ServeIfChild serves MCP on stdin/stdout and exits with status 0 when the
// environment variable EnvVar is "1"; otherwise it returns at once. Call it
// first in TestMain, before m.Run.
func ServeIfChild() {
	if os.Getenv(EnvVar) != "1" {
		return
	}
	s := NewServer(true)
	if n, err := strconv.Atoi(os.Getenv(FixturesVar)); err == nil {
		AddFixtures(s, n)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StdioCommand returns the command line that runs the current test binary
// as a stdio MCP server: the test package's TestMain must call ServeIfChild.
// env holds EnvVar and GORACE; the caller adds it to the child's
// environment.
func StdioCommand(t testing.TB) (command string, args []string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("mcptest: %v", err)
	}
	// A binary built with -race sleeps 1s when it exits, unless told not to.
	race := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return exe, []string{"-test.run=^$", "-test.count=1"}, map[string]string{EnvVar: "1", "GORACE": race}
}

type textArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type sleepArgs struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
}

type noArgs struct{}

type bigArgs struct {
	N int `json:"n" jsonschema:"how many bytes of text to return"`
}

type addToolArgs struct {
	Name string `json:"name" jsonschema:"the name of the tool to add"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func failure(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// NewServer returns a server with the tools of the package comment. stdio
// says whether it serves over stdio in a child process, where crash may
// exit.
func NewServer(stdio bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, &mcp.ServerOptions{HasTools: true})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers and returns the sum."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return text(strconv.FormatFloat(in.A+in.B, 'g', -1, 64)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps for ms milliseconds, then answers \"slept\"."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails: returns isError with the text \"failed on purpose\"."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return failure("failed on purpose"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "rpc_error", Description: "Answers with a JSON-RPC error (code -32000, \"rpc error on purpose\") instead of a result."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, &jsonrpc.Error{Code: -32000, Message: "rpc error on purpose"}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns n bytes of text: the digits 0-9 repeated."},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigArgs) (*mcp.CallToolResult, any, error) {
			if in.N < 0 || in.N > 64<<20 {
				return failure("n must be 0 to 64 MiB"), nil, nil
			}
			b := make([]byte, in.N)
			for i := range b {
				b[i] = '0' + byte(i%10)
			}
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Makes the server process exit with status 3 in the middle of the call (stdio only)."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			if !stdio {
				return failure("crash exits only a stdio server"), nil, nil
			}
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "auth", Description: "Returns the Authorization header of the HTTP request that carried this call, or \"(none)\"."},
		func(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			if req.Extra != nil && req.Extra.Header.Get("Authorization") != "" {
				return text(req.Extra.Header.Get("Authorization")), nil, nil
			}
			return text("(none)"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool with the given name that echoes its text argument; clients get notifications/tools/list_changed."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addToolArgs) (*mcp.CallToolResult, any, error) {
			if in.Name == "" {
				return failure("name is empty"), nil, nil
			}
			addEcho(s, in.Name)
			return text("added " + in.Name), nil, nil
		})
	return s
}

// addEcho adds a tool named name that echoes its text argument.
func addEcho(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added at run time; returns its text argument."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
}

// FixtureNames returns the names of the fixture tools in the order AddFixtures
// adds them: noun_verb, 64 in all ("calendar_list", "calendar_get", …).
func FixtureNames() []string {
	var names []string
	for _, n := range []string{"calendar", "invoice", "ticket", "contact", "weather", "inventory", "shipment", "playlist"} {
		for _, v := range []string{"list", "get", "create", "update", "delete", "search", "archive", "export"} {
			names = append(names, n+"_"+v)
		}
	}
	return names
}

// AddFixtures adds the first n of FixtureNames (all of them when n is larger):
// tools whose descriptions say what their names suggest, which do nothing but
// return their text argument.
func AddFixtures(s *mcp.Server, n int) {
	for i, name := range FixtureNames() {
		if i >= n {
			return
		}
		noun, verb, _ := strings.Cut(name, "_")
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: fmt.Sprintf("Test fixture: stands for %s on %s records; does nothing and returns its text argument.", verb, noun)},
			func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
				return text(in.Text), nil, nil
			})
	}
}

// HTTPServer is a streamable-HTTP MCP server on 127.0.0.1.
type HTTPServer struct {
	// URL is the MCP endpoint.
	URL string

	srv *mcp.Server
	ts  *httptest.Server

	mu       sync.Mutex
	lastAuth string
	auths    []string
	requests int
}

// HTTP starts a streamable-HTTP MCP server on 127.0.0.1, closed when the
// test ends.
func HTTP(t testing.TB) *HTTPServer {
	t.Helper()
	h := &HTTPServer{srv: NewServer(false)}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.srv }, nil)
	h.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		h.mu.Lock()
		h.requests++
		h.lastAuth = a
		if a != "" {
			h.auths = append(h.auths, a)
		}
		h.mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	h.URL = h.ts.URL
	t.Cleanup(func() {
		// Hanging GETs (the standalone SSE streams) would keep Close
		// waiting: cut every connection first.
		h.ts.CloseClientConnections()
		h.ts.Close()
	})
	return h
}

// AddTool adds a tool named name that echoes its text argument; connected
// clients get notifications/tools/list_changed.
func (h *HTTPServer) AddTool(name string) { addEcho(h.srv, name) }

// DropSessions closes every session on the server side, as a restarted
// server would have forgotten them: a client's next request on one gets 404.
func (h *HTTPServer) DropSessions() {
	for ss := range h.srv.Sessions() {
		ss.Close()
	}
}

// LastAuthorization returns the Authorization header of the most recent
// request, "" for none.
func (h *HTTPServer) LastAuthorization() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastAuth
}

// Authorizations returns every non-empty Authorization header the server
// has seen, in order.
func (h *HTTPServer) Authorizations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auths...)
}

// Requests returns how many HTTP requests the server has had.
func (h *HTTPServer) Requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}
