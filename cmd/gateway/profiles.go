package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/mcp"
	"github.com/maskgate/maskgate/toolsearch/policy"
	"github.com/maskgate/maskgate/toolsearch/profile"
)

// quietAfter is how long a profile must go without requests before the tools its MCP
// servers dropped (kept masked meanwhile) are taken out of its catalog: the prefix then
// moves, and no conversation is in the middle of using it.
const quietAfter = 10 * time.Minute

// profiles wires the configuration's profiles and MCP servers into the gateway, and
// keeps them current: an MCP server's list_changed updates the catalogs of the profiles
// that use it, and apply takes a reloaded configuration.
type profiles struct {
	ctx        context.Context
	configPath string
	getenv     func(string) string
	transport  http.RoundTripper
	log        *slog.Logger
	srv        *gateway.Server

	mu      sync.Mutex // serialises apply and refresh
	cfg     *config.Config
	servers map[string]*server
	built   map[string]*built
}

// server is one running MCP server.
type server struct {
	cfg config.MCPServer
	mcp *mcp.Server
}

// built is one profile as last applied.
type built struct {
	cfg    config.Profile
	gw     *gateway.Profile
	runner *runner
}

func newProfiles(ctx context.Context, configPath string, getenv func(string) string, transport http.RoundTripper, log *slog.Logger) *profiles {
	return &profiles{ctx: ctx, configPath: configPath, getenv: getenv, transport: transport, log: log,
		servers: map[string]*server{}, built: map[string]*built{}}
}

// apply builds every profile of cfg, starting the MCP servers they use and stopping
// those no profile uses any more, then hands the gateway the whole set at once. A
// profile whose tool settings did not change keeps its catalog, updated in place, so
// its cached prefix survives the reload.
func (w *profiles) apply(cfg *config.Config) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	servers := map[string]*server{}
	for _, sc := range cfg.MCPServers {
		if !used(cfg, sc.Name) {
			continue
		}
		if old, ok := w.servers[sc.Name]; ok && reflect.DeepEqual(old.cfg, sc) {
			servers[sc.Name] = old
			continue
		}
		s, err := w.startServer(sc)
		if err != nil {
			for name, s := range servers {
				if w.servers[name] != s {
					s.mcp.Close()
				}
			}
			return err
		}
		servers[sc.Name] = s
	}
	rules, err := compileProfilePolicy(cfg)
	if err != nil {
		return err
	}
	built := map[string]*built{}
	var list []*gateway.Profile
	aliases := map[string]gateway.Alias{}
	names := []string{}
	for _, p := range cfg.Profiles {
		names = append(names, p.Name)
	}
	if _, ok := cfg.Profile(config.DefaultProfile); ok && !contains(names, config.DefaultProfile) {
		names = append(names, config.DefaultProfile)
	}
	for _, name := range names {
		pc, _ := cfg.Profile(name)
		b, err := w.build(pc, servers)
		if err != nil {
			return err
		}
		built[name] = b
		list = append(list, b.gw)
		for alias, model := range pc.Aliases {
			aliases[alias] = gateway.Alias{Profile: name, Model: model}
		}
	}
	for name, s := range w.servers {
		if servers[name] != s {
			s.mcp.Close()
		}
	}
	w.cfg, w.servers, w.built = cfg, servers, built
	w.srv.Planner().SetProfiles(list, aliases, rules)
	return nil
}

func used(cfg *config.Config, server string) bool {
	for _, p := range cfg.Profiles {
		if contains(p.Tools.MCP, server) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// startServer opens an MCP server and connects it. A server that cannot be reached now
// is not an error: its tools join the catalogs when it comes up (it retries in the
// background), and the log says so.
func (w *profiles) startServer(sc config.MCPServer) (*server, error) {
	headers := map[string]string{}
	for k, v := range sc.Headers {
		headers[k] = v
	}
	for k, env := range sc.HeadersEnv {
		v := w.getenv(env)
		if v == "" {
			return nil, fmt.Errorf("mcp_servers %s: headers_env.%s: environment variable %s is empty", sc.Name, k, env)
		}
		headers[k] = v
	}
	dir := ""
	if w.configPath != "" && sc.Command != "" {
		dir = filepath.Dir(w.configPath)
	}
	s := &server{cfg: sc}
	m, err := mcp.Open(mcp.Config{Name: sc.Name, Command: sc.Command, Args: sc.Args, Env: sc.Env, Dir: dir,
		URL: sc.URL, Headers: headers, ForwardAuth: sc.ForwardAuth, Timeout: time.Duration(sc.Timeout),
		Allow: sc.Allow, Logger: w.log, OnChange: func() { w.refresh(sc.Name) }})
	if err != nil {
		return nil, fmt.Errorf("mcp_servers %s: %w", sc.Name, err)
	}
	s.mcp = m
	if err := m.Start(w.ctx); err != nil {
		w.log.Warn("MCP server not reachable yet; its tools join the catalog when it is", "server", sc.Name, "error", err)
	} else {
		w.log.Info("MCP server", "server", sc.Name, "tools", len(m.Tools()))
	}
	return s, nil
}

// build makes the gateway's profile for pc. Its catalog is the one built before when the
// profile's tool settings are unchanged (updated with the sources' current tools).
func (w *profiles) build(pc config.Profile, servers map[string]*server) (*built, error) {
	sources, err := w.sources(pc, servers)
	if err != nil {
		return nil, err
	}
	var cat *profile.Catalog
	if old, ok := w.built[pc.Name]; ok && reflect.DeepEqual(old.cfg.Tools, pc.Tools) && old.cfg.Search.Scorer == pc.Search.Scorer && old.gw.Catalog != nil {
		cat = old.gw.Catalog
		ch, err := cat.Update(sources)
		if err != nil {
			return nil, fmt.Errorf("profiles %s: %w", pc.Name, err)
		}
		w.report(pc.Name, ch, "reload")
	} else if cat, err = profile.New(w.spec(pc), sources); err != nil {
		return nil, fmt.Errorf("profiles %s: %w", pc.Name, err)
	}
	if cat.Index().Catalog().Len() == 0 && len(sources) == 0 {
		cat = nil
	}
	r := &runner{}
	r.set(pc, servers)
	gw := &gateway.Profile{Name: pc.Name, Catalog: cat, SearchTopK: pc.Search.TopK, SearchMinScore: pc.Search.MinScore,
		Strategy: gateway.Strategy(pc.Strategy), EagerBelow: eagerBelow(pc.Search.EagerBelow), ToolMode: pc.Search.Mode,
		MaxRounds: pc.Search.MaxRounds, AutoLoad: pc.Search.AutoLoad, Progressive: pc.Search.Progressive, Runner: r,
		ClientTools: pc.Search.ClientTools, TemplateOrder: pc.Search.CatalogFirst != nil && !*pc.Search.CatalogFirst,
		Limits: tenant.Limits{RequestsPerMinute: pc.Limits.RequestsPerMinute, TokensPerMinute: pc.Limits.TokensPerMinute,
			MaxConcurrent: pc.Limits.MaxConcurrent}}
	if cat != nil && pc.Search.Embeddings.URL != "" {
		gw.Hybrid = embed(w.ctx, pc.Search.Embeddings, cat.Index(), w.transport, w.getenv, w.log)
	}
	return &built{cfg: pc, gw: gw, runner: r}, nil
}

// eagerBelow is search.eager_below as gateway.Options and Profile take it: unset is their
// zero (the default, 20), and 0, off, is negative.
func eagerBelow(n *int) int {
	switch {
	case n == nil:
		return 0
	case *n == 0:
		return -1
	}
	return *n
}

func (w *profiles) spec(pc config.Profile) profile.Spec {
	o := toolsearch.Options{}
	if pc.Search.Scorer == "keyword" {
		o.Scorer = toolsearch.Keyword
	}
	spec := profile.Spec{Name: pc.Name, Allow: pc.Tools.Allow, Options: o, Log: w.log}
	for _, oc := range pc.Tools.Overrides {
		ov := profile.Override{Tool: oc.Tool, Fields: fields(oc.ToolFields)}
		for _, v := range oc.Variants {
			ov.Variants = append(ov.Variants, profile.Variant{When: compileCond(&v.When), Fields: fields(v.ToolFields)})
		}
		spec.Overrides = append(spec.Overrides, ov)
	}
	return spec
}

func fields(f config.ToolFields) profile.Fields {
	return profile.Fields{Description: f.Description, Summary: f.Summary, Parameters: json.RawMessage(f.Parameters), Enabled: f.Enabled}
}

// sources are pc's tools in resolution order: files, inline, MCP servers.
func (w *profiles) sources(pc config.Profile, servers map[string]*server) ([]profile.Source, error) {
	var out []profile.Source
	for _, f := range pc.Tools.Files {
		path := f
		if !filepath.IsAbs(f) && w.configPath != "" {
			path = filepath.Join(filepath.Dir(w.configPath), f)
		}
		tools, err := toolsearch.ReadFiles(path)
		if err != nil {
			return nil, fmt.Errorf("profiles %s: tools.files: %w", pc.Name, err)
		}
		out = append(out, profile.Source{Kind: "file", Name: f, Tools: tools})
	}
	if len(pc.Tools.Inline) > 0 {
		var tools []toolsearch.Tool
		for i, raw := range pc.Tools.Inline {
			t, err := toolsearch.ParseTools(append(append([]byte("["), raw...), ']'), fmt.Sprintf("profiles %s tools.inline[%d]", pc.Name, i))
			if err != nil {
				return nil, err
			}
			tools = append(tools, t...)
		}
		out = append(out, profile.Source{Kind: "inline", Name: "inline", Tools: tools})
	}
	for _, name := range pc.Tools.MCP {
		out = append(out, profile.Source{Kind: "mcp", Name: name, Tools: servers[name].mcp.Tools()})
	}
	return out, nil
}

// refresh takes an MCP server's new tool list into the catalogs of the profiles that
// use it.
func (w *profiles) refresh(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg == nil {
		return // still starting: apply reads the list itself
	}
	for pname, b := range w.built {
		if !contains(b.cfg.Tools.MCP, name) {
			continue
		}
		b.runner.set(b.cfg, w.servers)
		sources, err := w.sources(b.cfg, w.servers)
		if err != nil {
			w.log.Error("tool list change not applied", "profile", pname, "server", name, "error", err)
			continue
		}
		if b.gw.Catalog == nil {
			cat, err := profile.New(w.spec(b.cfg), sources)
			if err != nil {
				w.log.Error("tool list change not applied", "profile", pname, "server", name, "error", err)
				continue
			}
			b.gw.Catalog = cat // only before the profile has served: no catalog, no requests
			continue
		}
		ch, err := b.gw.Catalog.Update(sources)
		if err != nil {
			w.log.Error("tool list change not applied", "profile", pname, "server", name, "error", err)
			continue
		}
		w.report(pname, ch, "server "+name)
	}
}

// report logs and counts a catalog change.
func (w *profiles) report(profile string, ch profile.Change, why string) {
	if len(ch.Added) > 0 {
		w.srv.Planner().CatalogChanged(profile, "append")
	}
	if len(ch.Removed) > 0 {
		w.srv.Planner().CatalogChanged(profile, "mask")
	}
	if ch.Broke {
		w.srv.Planner().CatalogChanged(profile, "break")
		w.log.Warn("catalog changed in place: the cached prompt prefix of this profile moves", "profile", profile, "cause", why,
			"replaced", ch.Replaced, "version", ch.Version)
	}
	if len(ch.Added)+len(ch.Removed) > 0 {
		w.log.Info("catalog updated, prefix kept", "profile", profile, "cause", why, "added", ch.Added, "masked", ch.Removed, "version", ch.Version)
	}
}

// compact drops the masked tools of profiles that have been quiet for quietAfter.
func (w *profiles) compact(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, b := range w.built {
		if b.gw.Catalog == nil || b.gw.Catalog.Masked() == 0 || b.gw.IdleFor(now) < quietAfter {
			continue
		}
		ch, err := b.gw.Catalog.Compact()
		if err != nil {
			w.log.Error("compacting the catalog", "profile", name, "error", err)
			continue
		}
		w.report(name, ch, "quiet: masked tools dropped")
	}
}

// run compacts quiet profiles every minute until ctx is done.
func (w *profiles) run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.compact(now)
		}
	}
}

// logCatalogs logs each profile's catalog at start.
func (w *profiles) logCatalogs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, b := range w.built {
		if b.gw.Catalog != nil {
			cat := b.gw.Catalog.Index().Catalog()
			w.log.Info("tool catalog", "profile", name, "tools", cat.Len(), "version", cat.Version())
		}
	}
}

// close stops every MCP server.
func (w *profiles) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.servers {
		s.mcp.Close()
	}
	w.servers = map[string]*server{}
}

// compileProfilePolicy is the top-level filters and each profile's own, scoped to it.
func compileProfilePolicy(cfg *config.Config) (*policy.Policy, error) {
	filters := append([]config.Filter(nil), cfg.Filters...)
	for _, p := range cfg.Profiles {
		for _, f := range p.Filters {
			f.Profiles = []string{p.Name}
			filters = append(filters, f)
		}
	}
	return compilePolicy(filters)
}

// runner runs the calls to a profile's tools whose MCP server has execute: gateway.
type runner struct {
	by atomic.Pointer[map[string]*server] // tool id → server
}

func (r *runner) set(pc config.Profile, servers map[string]*server) {
	by := map[string]*server{}
	for _, name := range pc.Tools.MCP {
		s := servers[name]
		if s == nil || s.cfg.Execute != "gateway" {
			continue
		}
		for _, t := range s.mcp.Tools() {
			by[t.Name] = s
		}
	}
	r.by.Store(&by)
}

func (r *runner) Runs(tool string) bool {
	_, ok := (*r.by.Load())[tool]
	return ok
}

func (r *runner) Run(ctx context.Context, tool string, args json.RawMessage, bearer string) (string, bool) {
	s, ok := (*r.by.Load())[tool]
	if !ok {
		return "tool " + tool + " is not run by the gateway", true
	}
	if !s.cfg.ForwardAuth {
		bearer = ""
	}
	res := s.mcp.Call(ctx, tool, args, bearer)
	return res.Text, res.IsError
}
