package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultProfile is the profile of the top-level tools, search, strategy and filters.
const DefaultProfile = "default"

// Profile is one named tool setup.
type Profile struct {
	// Name is what keys, the X-Maskgate-Profile header and filters call it. Required,
	// unique; letters, digits, '-' and '_'.
	Name string `yaml:"name"`
	// Aliases map model names clients may send to the backend model each stands for:
	// {support-agent: llama3.1:8b} runs a request for "support-agent" under this profile
	// and sends it upstream as "llama3.1:8b".
	Aliases map[string]string `yaml:"aliases"`
	// Tools are the profile's tool sources.
	Tools ProfileTools `yaml:"tools"`
	// Search: the keys set here replace the top-level search's, for this profile.
	Search Search `yaml:"search"`
	// Strategy replaces the top-level strategy for this profile.
	Strategy string `yaml:"strategy"`
	// Filters are deny rules for this profile's requests alone, besides the top-level
	// filters (which name profiles themselves).
	Filters []Filter `yaml:"filters"`
	// Limits bound the traffic of the whole profile, every key together; 429 past them.
	Limits KeyLimits `yaml:"limits"`
}

// ProfileTools are where a profile's tools come from, resolved in this order: files,
// inline, then MCP servers, a later tool with an id an earlier one has replacing it
// wholesale (logged). The client's own tools come last, per request.
type ProfileTools struct {
	// Files are JSON arrays of OpenAI tool objects, relative to the config file.
	Files []string `yaml:"files"`
	// Inline are OpenAI tool objects written in the file.
	Inline []RawJSON `yaml:"inline"`
	// MCP names entries of mcp_servers; their tools are named SERVER_TOOL.
	MCP []string `yaml:"mcp"`
	// Allow are globs over the tool ids this profile keeps. Missing: every tool.
	// Empty (allow: []): none.
	Allow []string `yaml:"allow"`
	// Overrides change what the model sees of a tool, never what it does.
	Overrides []ToolOverride `yaml:"overrides"`
}

// ToolOverride changes one tool for this profile's model.
type ToolOverride struct {
	// Tool is the id, as the catalog names it (an MCP tool: SERVER_TOOL).
	Tool       string `yaml:"tool"`
	ToolFields `yaml:",inline"`
	// Variants are tried in order per request; the first whose when holds is merged over
	// the tool, each field it sets replacing the tool's. A variant the engine sees is a
	// catalog of its own, with its own cached prefix.
	Variants []ToolVariant `yaml:"variants"`
}

// ToolFields are what an override or variant may set.
type ToolFields struct {
	Description *string `yaml:"description"`
	// Summary replaces the tool's line in the catalog's index (strategy index).
	Summary *string `yaml:"summary"`
	// Parameters replaces the JSON schema.
	Parameters RawJSON `yaml:"parameters"`
	// Enabled false leaves the tool out.
	Enabled *bool `yaml:"enabled"`
}

// ToolVariant is a set of fields that applies when When holds.
type ToolVariant struct {
	When       Cond `yaml:"when"`
	ToolFields `yaml:",inline"`
}

// MCPServer is one MCP server: a command the gateway runs (stdio) or a URL (streamable
// HTTP).
type MCPServer struct {
	// Name prefixes its tools' ids (NAME_TOOL). Required, unique; letters, digits, '-'.
	Name string `yaml:"name"`
	// Command and Args run the server over stdio; Env is added to a minimal environment
	// (PATH, HOME, ...), never the gateway's own.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	// URL is a streamable HTTP endpoint; Headers go with every request, HeadersEnv names
	// variables whose values go as headers (for tokens).
	URL        string            `yaml:"url"`
	Headers    map[string]string `yaml:"headers"`
	HeadersEnv map[string]string `yaml:"headers_env"`
	// ForwardAuth sends the caller's own bearer token to the server on its calls.
	ForwardAuth bool `yaml:"forward_auth"`
	// Timeout bounds each call, and connecting. Default 30s.
	Timeout Duration `yaml:"timeout"`
	// Allow are the server's own tool names every profile may take. Missing: all.
	// Empty: none.
	Allow []string `yaml:"allow"`
	// Execute: gateway (the default) runs a call to one of its tools and gives the model
	// the result; client returns the call to the client like any other.
	Execute string `yaml:"execute"`
}

// DefaultMCPTimeout bounds an MCP call when the server sets no timeout.
const DefaultMCPTimeout = 30 * time.Second

var profileName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
var serverName = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// mergeProfileSearch gives each profile the top-level search with the keys it sets
// replaced, and the top-level strategy unless it names its own; and MCP servers their
// defaults.
func (c *Config) mergeProfileSearch() {
	t := reflect.TypeFor[Search]()
	for i := range c.Profiles {
		merged := c.Search
		own := reflect.ValueOf(&c.Profiles[i].Search).Elem()
		dst := reflect.ValueOf(&merged).Elem()
		for f := 0; f < t.NumField(); f++ {
			tag := t.Field(f).Tag.Get("yaml")
			if _, set := c.lines[fmt.Sprintf("profiles[%d].search.%s", i, tag)]; set {
				dst.Field(f).Set(own.Field(f))
			}
		}
		c.Profiles[i].Search = merged
		if c.Profiles[i].Strategy == "" {
			c.Profiles[i].Strategy = c.Strategy
		}
	}
	for j := range c.MCPServers {
		if c.MCPServers[j].Timeout == 0 {
			c.MCPServers[j].Timeout = Duration(DefaultMCPTimeout)
		}
		if c.MCPServers[j].Execute == "" {
			c.MCPServers[j].Execute = "gateway"
		}
	}
}

// Profile returns the named profile; "default" without a profiles entry of that name is
// the top-level one.
func (c *Config) Profile(name string) (Profile, bool) {
	for _, p := range c.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	if name == DefaultProfile {
		return Profile{Name: DefaultProfile, Tools: ProfileTools{Files: c.Tools.Files}, Search: c.Search, Strategy: c.Strategy}, true
	}
	return Profile{}, false
}

func checkSearch(bad func(key, format string, args ...any) error, key string, s *Search) error {
	if s.TopK < 0 {
		return bad(key+".top_k", "must be positive")
	}
	if s.MinScore < 0 || s.MinScore > 1 {
		return bad(key+".min_score", "must be between 0 and 1")
	}
	if !slices.Contains(SearchModes, s.Mode) {
		return bad(key+".mode", "unknown mode %q (server or client)", s.Mode)
	}
	if s.Scorer != "bm25" && s.Scorer != "keyword" {
		return bad(key+".scorer", "unknown scorer %q (bm25 or keyword)", s.Scorer)
	}
	if e := s.Embeddings; e.URL != "" {
		if err := checkURL("openai", e.URL); err != nil {
			return bad(key+".embeddings.url", "%v", err)
		}
		if e.Model == "" {
			return bad(key+".embeddings.model", "required with search.embeddings.url: the embedding model's name")
		}
	}
	if s.MaxRounds < 0 {
		return bad(key+".max_rounds", "must be positive")
	}
	if s.EagerBelow != nil && *s.EagerBelow < 0 {
		return bad(key+".eager_below", "must be 0 (off) or more")
	}
	if !slices.Contains(ClientToolModes, s.ClientTools) {
		return bad(key+".client_tools", "unknown mode %q (callable or managed)", s.ClientTools)
	}
	return nil
}

func (c *Config) validateProfiles(file string) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	servers := map[string]int{}
	for i, m := range c.MCPServers {
		key := fmt.Sprintf("mcp_servers[%d]", i)
		if !serverName.MatchString(m.Name) {
			return bad(key+".name", "required: 1–32 letters, digits or '-' (it prefixes the server's tool ids)")
		}
		if j, dup := servers[m.Name]; dup {
			return bad(key+".name", "duplicate server name %q (also mcp_servers[%d])", m.Name, j)
		}
		servers[m.Name] = i
		if (m.Command == "") == (m.URL == "") {
			return bad(key, "set exactly one of command (a server run over stdio) and url (streamable HTTP)")
		}
		if m.URL != "" {
			if err := checkURL("mcp", m.URL); err != nil {
				return bad(key+".url", "%v", err)
			}
			if m.ForwardAuth && !tokenSafe(m.URL) {
				return bad(key+".forward_auth", "sends each caller's MCP token to %s over plain http; use https://, or a server on loopback", m.URL)
			}
		} else if len(m.Headers) > 0 || len(m.HeadersEnv) > 0 || m.ForwardAuth {
			return bad(key, "headers, headers_env and forward_auth apply to a url server; this one runs a command")
		}
		if m.Execute != "gateway" && m.Execute != "client" {
			return bad(key+".execute", "unknown value %q (gateway or client)", m.Execute)
		}
		for j, a := range m.Allow {
			if a == "" {
				return bad(fmt.Sprintf("%s.allow[%d]", key, j), "empty tool name")
			}
		}
	}
	profiles := map[string]int{}
	aliases := map[string]string{}
	for i, p := range c.Profiles {
		key := fmt.Sprintf("profiles[%d]", i)
		if !profileName.MatchString(p.Name) {
			return bad(key+".name", "required: 1–64 letters, digits, '-' or '_'")
		}
		if j, dup := profiles[p.Name]; dup {
			return bad(key+".name", "duplicate profile name %q (also profiles[%d])", p.Name, j)
		}
		profiles[p.Name] = i
		if p.Name == DefaultProfile && len(c.Tools.Files) > 0 {
			return bad(key+".name", "the top-level tools are the default profile's; move them into this entry or rename it")
		}
		for alias := range p.Aliases {
			if other, dup := aliases[alias]; dup {
				return bad(key+".aliases."+alias, "alias %q also names profile %q", alias, other)
			}
			aliases[alias] = p.Name
			if p.Aliases[alias] == "" {
				return bad(key+".aliases."+alias, "the backend model it stands for is empty")
			}
		}
		if !slices.Contains(Strategies, p.Strategy) {
			return bad(key+".strategy", "unknown strategy %q (one of %s)", p.Strategy, strings.Join(Strategies, ", "))
		}
		if err := checkSearch(bad, key+".search", &c.Profiles[i].Search); err != nil {
			return err
		}
		if err := c.checkFilters(file, bad, key+".filters", p.Filters); err != nil {
			return err
		}
		for j, f := range p.Filters {
			if f.Profiles != nil {
				return bad(fmt.Sprintf("%s.filters[%d].profiles", key, j), "a profile's own filters apply to it alone; write profiles only in the top-level filters")
			}
		}
		for j, s := range p.Tools.MCP {
			k, ok := servers[s]
			if !ok {
				return bad(fmt.Sprintf("%s.tools.mcp[%d]", key, j), "no mcp_servers entry is named %q", s)
			}
			if p.Search.Mode == "client" && c.MCPServers[k].Execute == "gateway" {
				return bad(fmt.Sprintf("%s.tools.mcp[%d]", key, j), "server %q has execute: gateway, but this profile's search.mode is client, where the gateway runs no call; set execute: client or search.mode: server", s)
			}
		}
		for j, g := range p.Tools.Allow {
			if _, err := path.Match(g, ""); err != nil || g == "" {
				return bad(fmt.Sprintf("%s.tools.allow[%d]", key, j), "bad glob %q", g)
			}
		}
		for j, o := range p.Tools.Overrides {
			okey := fmt.Sprintf("%s.tools.overrides[%d]", key, j)
			if o.Tool == "" {
				return bad(okey+".tool", "required: the id of the tool to override")
			}
			for v, vr := range o.Variants {
				if err := c.checkCond(file, fmt.Sprintf("%s.variants[%d].when", okey, v), &vr.When); err != nil {
					return err
				}
			}
		}
	}
	for i, k := range c.Keys {
		key := fmt.Sprintf("keys[%d]", i)
		if k.Profile != "" && k.Profile != DefaultProfile {
			if _, ok := profiles[k.Profile]; !ok {
				return bad(key+".profile", "no profiles entry is named %q", k.Profile)
			}
		}
		for j, p := range k.Profiles {
			if _, ok := profiles[p]; !ok && p != DefaultProfile {
				return bad(fmt.Sprintf("%s.profiles[%d]", key, j), "no profiles entry is named %q", p)
			}
		}
	}
	return nil
}

// tokenSafe says whether a token may travel to raw: over https, or over plain http only to
// a loopback host (the token never crosses a network in clear).
func tokenSafe(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
