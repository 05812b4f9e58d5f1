package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/logtail"
)

// Path names, in the order every table and figure lists them.
const (
	pathDirect   = "direct"
	pathProxy    = "proxy"
	pathMaskgate = "maskgate"
	pathPortkey  = "portkey"
)

// path is one way to the upstream: where requests go, the headers they carry, the client
// that sends them, and how to read the CPU time of the process in the middle.
type path struct {
	name   string
	url    string // of /v1/chat/completions
	header http.Header
	client *http.Client
	// cpu is the middle process's user+system CPU time so far; nil for direct, which has
	// no process of its own (the upstream lives in this one).
	cpu func() (time.Duration, error)
	pid int
}

// childEnv, when set, makes this binary serve a path's middle process instead of
// measuring: its value is the upstream's base URL (without /v1). childKindEnv says which
// (pathMaskgate, the default, or pathProxy). See serveChild.
const (
	childEnv     = "MASKGATE_PEER_BENCH_UPSTREAM"
	childKindEnv = "MASKGATE_PEER_BENCH_KIND"
)

// serveChild is the child process a gateway path runs in, on a loopback port, plus a
// second loopback port that answers GET /cpu with this process's CPU time from
// getrusage. For pathMaskgate it serves the gateway as cmd/gateway builds it
// (gateway.New over an openaicompat backend, tools unmanaged); for pathProxy, a bare
// httputil.ReverseProxy to the upstream over the same transport: the floor any Go
// gateway in a process of its own starts from. It prints "ready GATEWAY CONTROL" on
// stdout and serves until its standard input closes, which happens when the bench exits.
func serveChild(kind, upstreamURL string) int {
	h, err := childHandler(kind, upstreamURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: %s child: %v\n", kind, err)
		return 1
	}
	gw, err := serveOn(h)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: %s child: %v\n", kind, err)
		return 1
	}
	ctl, err := serveOn(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := selfCPU()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, strconv.FormatInt(int64(d), 10))
	}))
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: %s child: %v\n", kind, err)
		return 1
	}
	fmt.Printf("ready %s %s\n", gw, ctl)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// childHandler is what a child of the given kind serves.
func childHandler(kind, upstreamURL string) (http.Handler, error) {
	switch kind {
	case pathMaskgate:
		be, err := openaicompat.New(openaicompat.Options{Name: "peer", BaseURL: upstreamURL + "/v1",
			Transport: upstreamTransport(), ReportsCache: false})
		if err != nil {
			return nil, err
		}
		return gateway.New(gateway.Options{Upstreams: []gateway.Upstream{
			{Name: "peer", Kind: "openai", Models: []string{model}, Backend: be},
		}}), nil
	case pathProxy:
		u, err := url.Parse(upstreamURL)
		if err != nil {
			return nil, err
		}
		rp := &httputil.ReverseProxy{
			Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u) },
			Transport: upstreamTransport(),
			// Streams are flushed event by event, as the gateway flushes them.
			FlushInterval: -1,
			ErrorLog:      log.New(io.Discard, "", 0),
		}
		// The body is read whole before it is forwarded, as every gateway here does.
		// Streamed through as it arrives, it raced the upstream's answer: 2 to 4 % of
		// streamed requests in a quick run came back cut short, the proxy's upstream
		// connection closed under it ("use of closed network connection" while copying
		// the answer).
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
			rp.ServeHTTP(w, r)
		}), nil
	}
	return nil, fmt.Errorf("no child of kind %q", kind)
}

// serveOn serves h on a free loopback port and returns its base URL.
func serveOn(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// upstreamTransport is what a gateway uses to reach the upstream: cmd/gateway's settings.
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// clientTransport keeps up to n connections alive per path, so that after the warm-up a
// request seldom pays for a dial.
func clientTransport(n int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConns = n
	t.MaxIdleConnsPerHost = n
	return t
}

// child is a process the bench started; stop ends it.
type child struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	stderr *logtail.Buffer
	done   chan struct{}
}

func (c *child) stop() {
	if c == nil || c.cmd.Process == nil {
		return
	}
	if c.stdin != nil {
		_ = c.stdin.Close()
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// startGoChild re-executes this binary as the child of the given kind (pathMaskgate or
// pathProxy) and returns its path.
func startGoChild(kind, upstreamURL string, maxInFlight int) (*path, *child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+upstreamURL, childKindEnv+"="+kind)
	c, stdout, err := startChild(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("%s child: %w", kind, err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	var gw, ctl string
	select {
	case l := <-lines:
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "ready" {
			c.stop()
			return nil, nil, fmt.Errorf("%s child said %q, not ready; stderr: %s", kind, l, c.stderr)
		}
		gw, ctl = f[1], f[2]
	case <-c.done:
		return nil, nil, fmt.Errorf("%s child exited before it was ready: %v; stderr: %s", kind, c.cmd.ProcessState, c.stderr)
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, nil, fmt.Errorf("%s child not ready after 30 s; stderr: %s", kind, c.stderr)
	}
	ctlClient := &http.Client{Timeout: 5 * time.Second}
	p := &path{name: kind, url: gw + "/v1/chat/completions", header: requestHeader(),
		client: &http.Client{Transport: clientTransport(maxInFlight)}, pid: cmd.Process.Pid,
		cpu: func() (time.Duration, error) {
			resp, err := ctlClient.Get(ctl + "/cpu")
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return 0, err
			}
			n, err := strconv.ParseInt(string(b), 10, 64)
			if err != nil || resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("%s child's CPU: status %d, %q", kind, resp.StatusCode, b)
			}
			return time.Duration(n), nil
		}}
	return p, c, nil
}

// portkeyScript is Portkey's entry point (its package.json "bin" and "start:node"), under
// the bench's node folder.
const portkeyScript = "node_modules/@portkey-ai/gateway/build/start-server.js"

// startPortkey starts the Portkey gateway with node on a free loopback port:
//
//	NODE_ENV=production node --import ./loopback.mjs \
//	    node_modules/@portkey-ai/gateway/build/start-server.js --port=PORT --headless
//
// in nodeDir, and waits until it answers. Requests name the upstream in
// x-portkey-custom-host; Portkey appends /chat/completions to it.
func startPortkey(node, nodeDir, upstreamURL string, maxInFlight int) (*path, *child, error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	preload := "file://" + filepath.ToSlash(filepath.Join(nodeDir, "loopback.mjs"))
	cmd := exec.Command(node, "--import", preload, portkeyScript, "--port="+strconv.Itoa(port), "--headless")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	c, stdout, err := startChild(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("portkey: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	probe := &http.Client{Timeout: time.Second}
	for {
		resp, err := probe.Get(base + "/")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte("AI Gateway")) {
				break
			}
		}
		if c.exited() {
			return nil, nil, fmt.Errorf("portkey exited before it answered: %v; stderr: %s", c.cmd.ProcessState, c.stderr)
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, nil, fmt.Errorf("portkey did not answer on %s within 30 s; stderr: %s", base, c.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	h := requestHeader()
	h.Set("x-portkey-provider", "openai")
	h.Set("x-portkey-custom-host", upstreamURL+"/v1")
	pid := cmd.Process.Pid
	p := &path{name: pathPortkey, url: base + "/v1/chat/completions", header: h,
		client: &http.Client{Transport: clientTransport(maxInFlight)}, pid: pid,
		cpu: func() (time.Duration, error) { return procCPU(pid) }}
	return p, c, nil
}

// startChild starts cmd with its stdin held open (the maskgate child serves until it
// closes), stderr kept in a small buffer for error messages, and stdout returned.
func startChild(cmd *exec.Cmd) (*child, io.Reader, error) {
	setChildAttrs(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, stderr: &logtail.Buffer{Max: 4 << 10}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, stdout, nil
}

func requestHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer sk-peer-bench")
	return h
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// nodeVersion is `node --version`, or "" when it fails.
func nodeVersion(node string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// installedVersion reads the version of an installed npm package under nodeDir, or ""
// when it is not installed.
func installedVersion(nodeDir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(nodeDir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Version
}

var errNoProc = errors.New("this system has no /proc to read a process's CPU time from")
