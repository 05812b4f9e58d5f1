package mcp

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maskgate/maskgate/internal/mcptest"
)

// TestHTTPServerDies: the HTTP server goes away during a call, then comes
// back at the same address.
func TestHTTPServerDies(t *testing.T) {
	serve := func(ln net.Listener) *httptest.Server {
		srv := mcptest.NewServer(false)
		ts := httptest.NewUnstartedServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		ts.Listener.Close()
		ts.Listener = ln
		ts.Start()
		t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
		return ts
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(ln)
	s := start(t, Config{Name: "t", URL: ts.URL, Logger: testLogger(t)})
	go func() {
		time.Sleep(300 * time.Millisecond)
		ts.CloseClientConnections()
		ts.Close()
	}()
	begin := time.Now()
	callErr(t, s, "t_sleep", `{"ms":5000}`, `tool "t_sleep" failed: the connection to MCP server "t" was lost during the call`)
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("the failed call took %v", d)
	}
	callErr(t, s, "t_echo", `{"text":"x"}`, `MCP server "t" is not connected`, "connection refused")

	ln, err = net.Listen("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatalf("cannot listen again at %s: %v", ts.URL, err)
	}
	serve(ln)
	call(t, s, "t_echo", `{"text":"back"}`, Result{Text: "back"})
}
