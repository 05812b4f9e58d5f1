package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.Strategy == "" {
		c.Strategy = "auto"
	}
	if c.Search.TopK == 0 {
		c.Search.TopK = DefaultTopK
	}
	if c.Search.TTL == 0 {
		c.Search.TTL = Duration(DefaultTTL)
	}
	if c.Search.Scorer == "" {
		c.Search.Scorer = "bm25"
	}
	if c.Search.Mode == "" {
		c.Search.Mode = "server"
	}
	if c.Search.MaxRounds == 0 {
		c.Search.MaxRounds = DefaultMaxRounds
	}
	if c.Search.EagerBelow == nil { // 0 is set: off
		n := DefaultEagerBelow
		c.Search.EagerBelow = &n
	}
	if c.Search.ClientTools == "" {
		c.Search.ClientTools = "callable"
	}
	c.Server.applyDefaults()
	if c.Admin.RequestLog == 0 {
		c.Admin.RequestLog = DefaultRequestLog
	}
	if c.Admin.EventInterval == 0 {
		c.Admin.EventInterval = Duration(DefaultEventInterval)
	}
	c.mergeProfileSearch()
	for i := range c.Backends {
		if c.Backends[i].Timeout == 0 {
			c.Backends[i].Timeout = Duration(DefaultTimeout)
		}
		if c.Backends[i].IdleTimeout == 0 {
			c.Backends[i].IdleTimeout = Duration(DefaultIdleTimeout)
		}
		if c.Backends[i].MaxResponseBytes == 0 {
			c.Backends[i].MaxResponseBytes = DefaultMaxResponse
		}
		if c.Backends[i].MaxEventBytes == 0 {
			c.Backends[i].MaxEventBytes = DefaultMaxEvent
		}
		if len(c.Backends[i].URLs) > 0 && c.Backends[i].HealthInterval == 0 {
			c.Backends[i].HealthInterval = Duration(DefaultHealthInterval)
		}
		if c.Backends[i].MaxInFlight == 0 {
			c.Backends[i].MaxInFlight = DefaultMaxInFlight
		}
		if c.Backends[i].MaxQueue == 0 {
			c.Backends[i].MaxQueue = DefaultMaxQueue
		}
		if c.Backends[i].QueueTimeout == 0 {
			c.Backends[i].QueueTimeout = Duration(DefaultQueueTimeout)
		}
	}
}

func (s *Server) applyDefaults() {
	set := func(d *Duration, v time.Duration) {
		if *d == 0 {
			*d = Duration(v)
		}
	}
	set(&s.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&s.BodyTimeout, DefaultBodyTimeout)
	set(&s.WriteTimeout, DefaultWriteTimeout)
	set(&s.KeepAliveTimeout, DefaultKeepAliveTimeout)
	set(&s.ShutdownGrace, DefaultShutdownGrace)
	set(&s.KeepaliveInterval, DefaultKeepaliveInterval)
	if s.EarlyEvents == "" {
		s.EarlyEvents = "on"
	}
	if s.MinBodyRate == 0 {
		s.MinBodyRate = DefaultMinBodyRate
	}
	if s.MaxHeaderBytes == 0 {
		s.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if s.MaxConnections == 0 {
		s.MaxConnections = DefaultMaxConnections
	}
}

// validate checks what the decoder cannot: required fields, allowed values, uniqueness.
// It reports the first problem, located.
func (c *Config) validate(file string) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(Strategies, c.Strategy) {
		return bad("strategy", "unknown strategy %q (one of %s)", c.Strategy, strings.Join(Strategies, ", "))
	}
	if err := checkSearch(bad, "search", &c.Search); err != nil {
		return err
	}
	if h := c.Doors.HostedTools; h != "" && h != "drop" && h != "refuse" {
		return bad("doors.hosted_tools", "unknown value %q (drop or refuse)", h)
	}
	if d := time.Duration(c.Server.WriteTimeout); d < MinWriteTimeout {
		return bad("server.write_timeout", "must be at least %v (a client may take a moment to read)", MinWriteTimeout)
	}
	if d := c.Server.KeepaliveInterval; d != Off && time.Duration(d) < MinKeepaliveInterval {
		return bad("server.keepalive_interval", "must be at least %v, or off", MinKeepaliveInterval)
	}
	if e := c.Server.EarlyEvents; e != "on" && e != "off" {
		return bad("server.early_events", "unknown value %q (on or off)", e)
	}
	if c.Server.MaxConnections < 0 { // durations and sizes the decoder keeps positive
		return bad("server.max_connections", "must be positive")
	}
	if c.Doors.WebSocket.MaxPerKey < 0 {
		return bad("doors.websocket.max_per_key", "must be positive (unset: %d)", 32)
	}
	for _, p := range c.Server.TrustedProxies {
		if _, err := parsePrefix(p); err != nil {
			return bad("server.trusted_proxies", "%q is neither an IP address nor a CIDR prefix (10.0.0.0/8)", p)
		}
	}
	if n := c.Admin.RequestLog; n < 0 || n > MaxRequestLog {
		return bad("admin.request_log", "must be between 1 and %d requests (it is held in memory)", MaxRequestLog)
	}
	if d := time.Duration(c.Admin.EventInterval); d < MinEventInterval || d > MaxEventInterval {
		return bad("admin.event_interval", "must be between %v and %v", MinEventInterval, MaxEventInterval)
	}
	if err := c.checkFilters(file, bad, "filters", c.Filters); err != nil {
		return err
	}
	names := map[string]int{}
	for i, b := range c.Backends {
		key := fmt.Sprintf("backends[%d]", i)
		if b.Name == "" {
			return bad(key+".name", "required: give each backend a unique name")
		}
		if j, dup := names[b.Name]; dup {
			return bad(key+".name", "duplicate backend name %q (also backends[%d])", b.Name, j)
		}
		names[b.Name] = i
		if !slices.Contains(Kinds, b.Kind) {
			return bad(key+".kind", "unknown kind %q (one of %s)", b.Kind, strings.Join(Kinds, ", "))
		}
		if b.Kind == "embedded" {
			if b.Model == "" {
				return bad(key+".model", "required for kind embedded: the path of a GGUF file")
			}
			if b.URLs != nil {
				return bad(key+".urls", "kind embedded runs in this process; it has no urls (run one gateway per GPU, or serve the model with llama-server)")
			}
			if b.Threads < 0 {
				return bad(key+".threads", "%d: the engine's CPU threads, 0 (one per core) or more", b.Threads)
			}
		} else if b.Threads != 0 {
			return bad(key+".threads", "applies only to kind embedded: set an engine's own threads where it runs (llama-server --threads, Ollama num_thread)")
		} else if err := c.validateURLs(file, key, b); err != nil {
			return err
		}
		if b.HealthInterval != 0 && b.URLs == nil {
			return bad(key+".health_interval", "applies only with urls: a single url is not health-checked")
		}
		if len(b.Models) == 0 {
			return bad(key+".models", `required: list the model names routed here, or "*" for any`)
		}
		for j, m := range b.Models {
			if m == "" {
				return bad(fmt.Sprintf("%s.models[%d]", key, j), "empty model name")
			}
		}
		if b.Format != "" && !slices.Contains(Formats, b.Format) {
			return bad(key+".format", "unknown format %q (one of %s)", b.Format, strings.Join(Formats, ", "))
		}
		switch b.ReasoningField {
		case "", "reasoning", "reasoning_content":
		default:
			return bad(key+".reasoning_field", "must be reasoning or reasoning_content (or left out to detect)")
		}
		if b.ContextWindow < 0 {
			return bad(key+".context_window", "must be a positive number of tokens, or 0 for unknown")
		}
		if time.Duration(b.Timeout) <= 0 {
			return bad(key+".timeout", "must be positive")
		}
		if b.MaxEventBytes > 1<<30 {
			return bad(key+".max_event_bytes", "must be at most 1GiB")
		}
		if b.MaxInFlight < 0 {
			return bad(key+".max_in_flight", "must be positive")
		}
		if b.MaxQueue < 0 {
			return bad(key+".max_queue", "must be positive")
		}
		if err := c.validateRouting(file, key+".routing", b); err != nil {
			return err
		}
	}
	if err := c.validateKeys(file); err != nil {
		return err
	}
	if err := c.validateProfiles(file); err != nil {
		return err
	}
	return c.validateState(file)
}

// validateURLs checks the backend's address: url, or urls for replicas, not both.
func (c *Config) validateURLs(file, key string, b Backend) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if b.URLs == nil {
		if err := checkURL(b.Kind, b.URL); err != nil {
			if b.URL == "" {
				return bad(key+".url", "%v (or urls: a list, for several replicas of one engine)", err)
			}
			return bad(key+".url", "%v", err)
		}
		return nil
	}
	if b.URL != "" {
		return bad(key+".urls", "set url or urls, not both (urls lists every replica)")
	}
	if len(b.URLs) == 0 {
		return bad(key+".urls", "empty: list each replica's address, e.g. [%s]", exampleURL(b.Kind))
	}
	seen := map[string]int{}
	for j, u := range b.URLs {
		k := fmt.Sprintf("%s.urls[%d]", key, j)
		if err := checkURL(b.Kind, u); err != nil {
			return bad(k, "%v", err)
		}
		norm := strings.TrimRight(u, "/")
		if first, dup := seen[norm]; dup {
			return bad(k, "%q is listed twice (also urls[%d]); each replica once", u, first)
		}
		seen[norm] = j
	}
	return nil
}

func checkURL(kind, raw string) error {
	if raw == "" {
		return fmt.Errorf("required: the %s server's address, e.g. %s", kind, exampleURL(kind))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL, e.g. %s", raw, exampleURL(kind))
	}
	return nil
}

func exampleURL(kind string) string {
	switch kind {
	case "llamacpp":
		return "http://127.0.0.1:8080"
	case "ollama":
		return "http://127.0.0.1:11434"
	case "vllm":
		return "http://127.0.0.1:8000/v1"
	case "sglang":
		return "http://127.0.0.1:30000/v1"
	case "anthropic":
		return "https://api.anthropic.com"
	default:
		return "https://api.openai.com/v1"
	}
}

// line finds where key, or the nearest enclosing key that the file has, is written.
func (c *Config) line(key string) int {
	for key != "" {
		if n, ok := c.lines[key]; ok {
			return n
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// checkFilters validates filter rules written under key ("filters", or a profile's).
func (c *Config) checkFilters(file string, bad func(key, format string, args ...any) error, at string, filters []Filter) error {
	for i, f := range filters {
		key := fmt.Sprintf("%s[%d]", at, i)
		if len(f.Phases) == 0 {
			return bad(key+".phases", "required: list the phases the rule denies in (%s)", strings.Join(FilterPhases, ", "))
		}
		for j, ph := range f.Phases {
			if !slices.Contains(FilterPhases, ph) {
				return bad(fmt.Sprintf("%s.phases[%d]", key, j), "unknown phase %q (one of %s)", ph, strings.Join(FilterPhases, ", "))
			}
		}
		for _, m := range []struct {
			field string
			list  []FilterMatch
		}{{"headers", f.Headers}, {"metadata", f.Metadata}} {
			for j, fm := range m.list {
				if fm.Name == "" {
					return bad(fmt.Sprintf("%s.%s[%d].name", key, m.field, j), "required: the %s name to match", strings.TrimSuffix(m.field, "s"))
				}
			}
		}
		if err := c.checkCond(file, key+".when", f.When); err != nil {
			return err
		}
	}
	return nil
}

// httpToken reports whether s is an RFC 9110 token, as a header name must be.
func httpToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}
