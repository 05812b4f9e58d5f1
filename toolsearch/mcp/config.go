package mcp

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// DefaultTimeout bounds a call, and a connect with its listing, when
// Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config describes one MCP server: a command run over stdio, or a streamable
// HTTP URL.
type Config struct {
	// Name is the server's name: ASCII letters, digits and '-'. Tool ids are
	// Name + "_" + the server's tool name.
	Name string

	// Command runs the server over stdio, with Args, in Dir (optional). The
	// child's environment is a minimal one inherited from the gateway (PATH,
	// HOME, USER, LANG, TMPDIR, SystemRoot...; see inheritedEnv) plus Env:
	// never the gateway's whole environment, which holds keys.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string

	// URL is a streamable-HTTP endpoint; Headers are sent on every request.
	URL     string
	Headers map[string]string
	// ForwardAuth sends the caller's bearer token (Call's bearer argument) as
	// Authorization on that call's HTTP requests, and never on others
	// (connecting, listing); for those requests it replaces an Authorization
	// header in Headers. Ignored for stdio.
	ForwardAuth bool

	// Timeout bounds each call, and each connect with its listing; zero means
	// DefaultTimeout.
	Timeout time.Duration

	// Allow lists the server's own tool names that may be used: nil allows
	// all, a non-nil empty slice none.
	Allow []string

	// Logger receives the package's and the SDK's logs; nil discards them.
	Logger *slog.Logger

	// OnChange is called, holding no locks, after the server's tool list
	// changed and was re-read: on notifications/tools/list_changed, or when a
	// reconnect (or Start's background retry) found a different list. It runs
	// on one of the server's goroutines, which Close waits for: it may call
	// Tools, never Close.
	OnChange func()
}

// maxNameLen is toolsearch's limit on a tool name.
const maxNameLen = 128

func (c *Config) validate() error {
	if c.Name == "" {
		return fmt.Errorf("mcp server: name is empty")
	}
	for i := 0; i < len(c.Name); i++ {
		b := c.Name[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-') {
			return fmt.Errorf("mcp server %q: the name may hold only ASCII letters, digits and '-'", c.Name)
		}
	}
	if len(c.Name)+2 > maxNameLen {
		return fmt.Errorf("mcp server %.40q…: the name is longer than %d bytes", c.Name, maxNameLen-2)
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("mcp server %q: %s", c.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Command == "" && c.URL == "":
		return fail("set command (stdio) or url (streamable HTTP)")
	case c.Command != "" && c.URL != "":
		return fail("set command or url, not both")
	}
	if c.Timeout < 0 {
		return fail("timeout %v is negative", c.Timeout)
	}
	for _, a := range c.Allow {
		if a == "" {
			return fail("allow holds an empty tool name")
		}
	}
	if c.Command != "" {
		if len(c.Headers) > 0 {
			return fail("headers apply to url servers only, not to command")
		}
		for k, v := range c.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				return fail("env %q: a name must be non-empty without '=' or NUL, a value without NUL", k)
			}
		}
		return nil
	}
	if len(c.Args) > 0 || len(c.Env) > 0 || c.Dir != "" {
		return fail("args, env and dir apply to command servers only, not to url")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return fail("url: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail("url %q must be an absolute http or https URL", c.URL)
	}
	for k, v := range c.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n\x00") {
			return fail("header %q: a name must be a non-empty token, a value without CR, LF or NUL", k)
		}
	}
	return nil
}

// inheritedEnv names the variables a stdio server inherits from the
// gateway: what finding programs, home, user, locale and temporary files
// need, on Unix and Windows. Everything else (API keys, tokens) stays out.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	// Windows
	"SystemRoot", "SystemDrive", "ComSpec", "PATHEXT", "TEMP", "TMP", "USERNAME", "USERPROFILE",
	"HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "ProgramFiles", "PROCESSOR_ARCHITECTURE",
}

// childEnv is the environment of a stdio server: inheritedEnv's variables
// that are set, overridden and extended by env, sorted by name.
func childEnv(env map[string]string) []string {
	m := map[string]string{}
	for _, k := range inheritedEnv {
		v, ok := os.LookupEnv(k)
		// A value starting with "()" is a shell function, not data.
		if ok && !strings.HasPrefix(v, "()") {
			m[k] = v
		}
	}
	for k, v := range env {
		if runtime.GOOS == "windows" {
			// Windows names are case-insensitive: the config's spelling wins.
			for old := range m {
				if strings.EqualFold(old, k) {
					delete(m, old)
				}
			}
		}
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
