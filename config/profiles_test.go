package config

import (
	"strings"
	"testing"
	"time"
)

const profilesYAML = `search:
  top_k: 7
  max_rounds: 6
strategy: mask
mcp_servers:
  - name: fs
    command: npx
    args: [server-filesystem, /srv]
    env: {LOG: quiet}
    allow: [read_file]
  - name: web
    url: https://mcp.example.com/mcp
    headers: {X-Team: a}
    forward_auth: true
    timeout: 5s
    execute: client
profiles:
  - name: support
    aliases: {support-agent: "llama3.1:8b"}
    tools:
      inline:
        - type: function
          function:
            name: kb_search
            description: Search the knowledge base.
            parameters: {type: object, properties: {q: {type: string}}, required: [q]}
      mcp: [fs, web]
      allow: ["kb_*", "fs_*"]
      overrides:
        - tool: kb_search
          description: Search the support KB.
          variants:
            - when: {field: metadata.plan, equals: pro}
              description: Search every KB.
    search:
      top_k: 3
    strategy: remove
    filters:
      - {phases: [active], tools: [fs_read_file], when: {not: {field: metadata.plan, equals: pro}}}
    limits: {requests_per_minute: 100}
  - name: coding
`

func TestParse_Profiles(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(profilesYAML))
	if err != nil {
		t.Fatal(err)
	}
	sup, ok := cfg.Profile("support")
	if !ok {
		t.Fatal("no support profile")
	}
	// The profile's search is the top level's with its own keys replaced.
	if sup.Search.TopK != 3 || sup.Search.MaxRounds != 6 || sup.Search.Mode != "server" || sup.Strategy != "remove" {
		t.Errorf("support search %+v strategy %s", sup.Search, sup.Strategy)
	}
	cod, _ := cfg.Profile("coding")
	if cod.Search.TopK != 7 || cod.Strategy != "mask" {
		t.Errorf("coding inherits %+v %s", cod.Search, cod.Strategy)
	}
	if want := `{"type":"function","function":{"name":"kb_search","description":"Search the knowledge base.","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`; string(sup.Tools.Inline[0]) != want {
		t.Errorf("inline tool as JSON:\n got %s\nwant %s", sup.Tools.Inline[0], want)
	}
	o := sup.Tools.Overrides[0]
	if *o.Description != "Search the support KB." || *o.Variants[0].Description != "Search every KB." || o.Variants[0].When.Field != "metadata.plan" {
		t.Errorf("override %+v", o)
	}
	if sup.Aliases["support-agent"] != "llama3.1:8b" || sup.Limits.RequestsPerMinute != 100 {
		t.Errorf("aliases %v limits %+v", sup.Aliases, sup.Limits)
	}
	fs, web := cfg.MCPServers[0], cfg.MCPServers[1]
	if fs.Execute != "gateway" || time.Duration(fs.Timeout) != 30*time.Second || fs.Env["LOG"] != "quiet" || len(fs.Allow) != 1 {
		t.Errorf("fs %+v", fs)
	}
	if web.Execute != "client" || time.Duration(web.Timeout) != 5*time.Second || !web.ForwardAuth || web.Headers["X-Team"] != "a" {
		t.Errorf("web %+v", web)
	}
	// Missing and empty allowlists read differently.
	if cod.Tools.Allow != nil {
		t.Error("a missing allowlist decoded as non-nil")
	}
	empty, err := Parse("g.yaml", []byte("profiles: [{name: x, tools: {allow: []}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := empty.Profiles[0].Tools.Allow; a == nil || len(a) != 0 {
		t.Errorf("allow: [] decoded as %#v, want empty non-nil", a)
	}
	// The top level is the default profile.
	def, ok := cfg.Profile(DefaultProfile)
	if !ok || def.Search.TopK != 7 || def.Strategy != "mask" {
		t.Errorf("default %+v", def)
	}
}

func TestParse_ProfileErrorsNameFileLineAndKey(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"unknown server", "profiles:\n  - name: a\n    tools:\n      mcp: [nope]\n",
			`g.yaml:4: profiles[0].tools.mcp[0]: no mcp_servers entry is named "nope"`},
		{"duplicate profile", "profiles:\n  - name: a\n  - name: a\n",
			`g.yaml:3: profiles[1].name: duplicate profile name "a" (also profiles[0])`},
		{"bad profile name", "profiles:\n  - name: 'a b'\n",
			`g.yaml:2: profiles[0].name: required: 1–64 letters, digits, '-' or '_'`},
		{"key names an unknown profile", "keys:\n  - name: k\n    key_env: K\n    profile: ghost\n",
			`g.yaml:4: keys[0].profile: no profiles entry is named "ghost"`},
		{"key may choose an unknown profile", "profiles: [{name: a}]\nkeys:\n  - name: k\n    key_env: K\n    profiles: [a, ghost]\n",
			`g.yaml:5: keys[0].profiles[1]: no profiles entry is named "ghost"`},
		{"server with command and url", "mcp_servers:\n  - name: s\n    command: x\n    url: http://h/mcp\n",
			`g.yaml:2: mcp_servers[0]: set exactly one of command (a server run over stdio) and url (streamable HTTP)`},
		{"forward_auth over plain http", "mcp_servers:\n  - name: s\n    url: http://mcp.example.com/mcp\n    forward_auth: true\n",
			`g.yaml:4: mcp_servers[0].forward_auth: sends each caller's MCP token to http://mcp.example.com/mcp over plain http; use https://, or a server on loopback`},
		{"headers on a command", "mcp_servers:\n  - name: s\n    command: x\n    forward_auth: true\n",
			`g.yaml:2: mcp_servers[0]: headers, headers_env and forward_auth apply to a url server; this one runs a command`},
		{"bad execute", "mcp_servers:\n  - name: s\n    command: x\n    execute: maybe\n",
			`g.yaml:4: mcp_servers[0].execute: unknown value "maybe" (gateway or client)`},
		{"bad server name", "mcp_servers:\n  - name: my_server\n    command: x\n",
			`g.yaml:2: mcp_servers[0].name: required: 1–32 letters, digits or '-' (it prefixes the server's tool ids)`},
		{"gateway execution in client mode", "mcp_servers: [{name: s, command: x}]\nprofiles:\n  - name: a\n    search: {mode: client}\n    tools: {mcp: [s]}\n",
			`g.yaml:5: profiles[0].tools.mcp[0]: server "s" has execute: gateway, but this profile's search.mode is client, where the gateway runs no call; set execute: client or search.mode: server`},
		{"profile search checked", "profiles:\n  - name: a\n    search:\n      scorer: vector\n",
			`g.yaml:4: profiles[0].search.scorer: unknown scorer "vector" (bm25 or keyword)`},
		{"profile client_tools checked", "profiles:\n  - name: a\n    search:\n      client_tools: lazy\n",
			`g.yaml:4: profiles[0].search.client_tools: unknown mode "lazy" (callable or managed)`},
		{"profile strategy checked", "profiles:\n  - name: a\n    strategy: fast\n",
			`g.yaml:3: profiles[0].strategy: unknown strategy "fast" (one of auto, eager, mask, allowed_tools, remove, validate, index)`},
		{"profile filter checked", "profiles:\n  - name: a\n    filters:\n      - tools: [x]\n",
			`g.yaml:4: profiles[0].filters[0].phases: required: list the phases the rule denies in (search, load, active)`},
		{"profile filter names profiles", "profiles:\n  - name: a\n    filters:\n      - {phases: [load], profiles: [b]}\n",
			`g.yaml:4: profiles[0].filters[0].profiles: a profile's own filters apply to it alone; write profiles only in the top-level filters`},
		{"variant rule checked", "profiles:\n  - name: a\n    tools:\n      overrides:\n        - tool: t\n          variants:\n            - when: {field: plan, equals: pro}\n",
			`g.yaml:7: profiles[0].tools.overrides[0].variants[0].when.field:`},
		{"override without tool", "profiles:\n  - name: a\n    tools:\n      overrides:\n        - description: x\n",
			`g.yaml:5: profiles[0].tools.overrides[0].tool: required: the id of the tool to override`},
		{"bad allow glob", "profiles:\n  - name: a\n    tools:\n      allow: ['[x']\n",
			`g.yaml:4: profiles[0].tools.allow[0]: bad glob "[x"`},
		{"alias twice", "profiles:\n  - name: a\n    aliases: {m: x}\n  - name: b\n    aliases: {m: y}\n",
			`g.yaml:5: profiles[1].aliases.m: alias "m" also names profile "a"`},
		{"inline tool not JSON-able", "profiles:\n  - name: a\n    tools:\n      inline:\n        - {x: .inf}\n",
			`g.yaml:5: profiles[0].tools.inline[0].x: ".inf" is not a number JSON can carry`},
		{"default twice", "tools: {files: [a.json]}\nprofiles:\n  - name: default\n",
			`g.yaml:3: profiles[0].name: the top-level tools are the default profile's; move them into this entry or rename it`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("g.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// ttl: never is no expiry; 0, like no ttl at all, is the default hour; "never" means
// nothing for other durations.
func TestParse_TTLNever(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("search: {ttl: never}\n"))
	if err != nil || cfg.Search.TTL != NoExpiry {
		t.Fatalf("ttl never: %v %v", cfg.Search.TTL, err)
	}
	cfg, _ = Parse("g.yaml", []byte("search: {ttl: 0s}\n"))
	if time.Duration(cfg.Search.TTL) != time.Hour {
		t.Errorf("ttl 0: %v, want the default hour", time.Duration(cfg.Search.TTL))
	}
	if _, err := Parse("g.yaml", []byte("doors: {store_ttl: never}\n")); err == nil || !strings.Contains(err.Error(), "doors.store_ttl: invalid duration") {
		t.Errorf("never accepted for store_ttl: %v", err)
	}
}

// client_tools is callable unless set, and catalog_first on unless set false; a profile
// keeps the top level's unless it sets its own.
func TestParse_ClientToolsAndCatalogFirst(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("search: {client_tools: managed}\nprofiles:\n  - name: a\n  - name: b\n    search: {client_tools: callable, catalog_first: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Search; s.ClientTools != "managed" || s.CatalogFirst != nil {
		t.Errorf("top level: client_tools %q, catalog_first %v", s.ClientTools, s.CatalogFirst)
	}
	if s := cfg.Profiles[0].Search; s.ClientTools != "managed" || s.CatalogFirst != nil {
		t.Errorf("profile a: client_tools %q, catalog_first %v; want the top level's", s.ClientTools, s.CatalogFirst)
	}
	if s := cfg.Profiles[1].Search; s.ClientTools != "callable" || s.CatalogFirst == nil || *s.CatalogFirst {
		t.Errorf("profile b: client_tools %q, catalog_first %v; want its own", s.ClientTools, s.CatalogFirst)
	}
	empty, err := Parse("g.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Search.ClientTools != "callable" || empty.Search.CatalogFirst != nil {
		t.Errorf("defaults: client_tools %q, catalog_first %v", empty.Search.ClientTools, empty.Search.CatalogFirst)
	}
}

func TestParse_IndexStrategyAndSummaryOverride(t *testing.T) {
	c, err := Parse("g.yaml", []byte("strategy: index\nprofiles:\n  - name: p\n    strategy: index\n    tools:\n      overrides: [{tool: a_b, summary: Files a ticket}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Strategy != "index" || c.Profiles[0].Strategy != "index" {
		t.Errorf("strategy %q, profile's %q", c.Strategy, c.Profiles[0].Strategy)
	}
	if s := c.Profiles[0].Tools.Overrides[0].Summary; s == nil || *s != "Files a ticket" {
		t.Errorf("summary %v", s)
	}
}
