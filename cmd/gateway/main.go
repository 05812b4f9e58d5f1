// Command gateway runs maskgate: an OpenAI-compatible gateway in front of llama-server,
// vLLM, SGLang, Ollama and hosted APIs.
//
//	gateway [-config FILE] [-listen ADDR] [-model FILE.gguf]
//	printf %s "$KEY" | gateway -hash-key
//	gateway stats -url http://HOST:4000 -admin-key-env VAR
//
// With no -config it looks for engines on their default loopback ports and routes the
// models they list. This package holds flags and wiring only.
//
// The embedded llama.cpp engine is in builds with the tag llamacpp only, which need cgo
// and C headers the Ollama module omits; from a source checkout, scripts/run-embedded
// provisions them and runs this command with the tag and its arguments. A build without
// the tag asked for -model names that command instead. In a llamacpp build:
//   - -model FILE.gguf serves the file, listed in /v1/models under its base name without
//     .gguf;
//   - with no -config, -model or engine on the default ports, it serves a random-weight
//     demo model it generates (bench/tinymodel), listed as maskgate-demo and logged as
//     such at start; its answers are noise, so clients should set max_tokens.
//
// Either way the embedded engine holds one model and, as llama-server does, answers any
// model name no other backend lists; responses echo the name the request gave.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/gateway/tracing"
	"github.com/maskgate/maskgate/gateway/wsock"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-hash-key" {
		os.Exit(hashKey(os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { // the first signal starts the graceful shutdown; a second one kills at once
		<-ctx.Done()
		stop()
	}()
	var code int
	if len(os.Args) > 1 && os.Args[1] == "stats" { // a running gateway's live numbers (stats.go)
		code = stats(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr)
	} else {
		code = run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	}
	stop()
	os.Exit(code)
}

// run serves until ctx is done and returns the process exit status: 0 after a clean
// shutdown, 1 when serving fails, 2 for bad flags or configuration.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration `file`; without it, engines on their default loopback ports are discovered")
	listen := fs.String("listen", "", "address to serve on (default "+config.DefaultListen+", or the config's listen)")
	model := fs.String("model", "", "serve this GGUF `file` with the embedded engine (builds with -tags llamacpp; from a source checkout: "+runEmbedded+" -model FILE.gguf)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	healthcheck := fs.String("healthcheck", "", "GET this `url`, exit 0 if it answers 200 and 1 otherwise (for container health checks), then stop")
	fs.Bool("hash-key", false, "read a client key on stdin and print its key_hash for the config, then stop (takes no other flag)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.Lookup("hash-key").Value.String() == "true" {
		fmt.Fprintf(stderr, "gateway: -hash-key takes no other flag: %s\n", config.HashKeyHint)
		return 2
	}
	if *healthcheck != "" {
		return probe(ctx, *healthcheck, stderr)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "gateway: -log-level %q: use debug, info, warn or error\n", *logLevel)
		return 2
	}

	cfg := &config.Config{}
	if *configPath != "" {
		var err error
		if cfg, err = config.Load(*configPath); err != nil {
			fmt.Fprintf(stderr, "gateway: %v\n", err)
			return 2
		}
	} else if c, err := config.Parse("(defaults)", nil); err == nil {
		cfg = c
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if err := checkExposure(cfg, cfg.Listen); err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}
	if *model != "" {
		if err := addEmbeddedModel(cfg, *model); err != nil {
			fmt.Fprintf(stderr, "gateway: -model: %v\n", err)
			return 2
		}
	}
	// Every log line passes the redactor: no configured key's value, nor anything
	// key-shaped an upstream echoes, reaches the log.
	log := slog.New(gateway.RedactLogs(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), secretValues(cfg, getenv)...))
	if *model != "" {
		log.Info("serving with the embedded engine", "model", ggufModelName(*model), "file", *model)
	}

	// Traces from the OTEL_* environment; off (nil, nothing per request) when it names none.
	traces, err := tracing.FromEnv(ctx, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}
	defer traces.Close() // flushes the spans still batched
	var transport http.RoundTripper = newTransport()
	if traces != nil {
		log.Info("tracing: spans go over OTLP/HTTP; upstreams get the W3C trace context", "endpoint", traces.Endpoint)
		transport = tracing.Transport(transport)
	}
	if len(cfg.Backends) == 0 {
		cfg.Backends = findBackends(ctx, defaultEngines, *configPath != "", transport, log)
	}
	// A backend with routing.hint_header gets its hint through the transport.
	ups, err := buildUpstreams(cfg, backends.HintTransport(transport), getenv, log)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}

	// Compiled now so that a bad rule stops the start, not a request.
	adminKey := ""
	if cfg.AdminKeyEnv != "" {
		if adminKey = getenv(cfg.AdminKeyEnv); adminKey == "" {
			fmt.Fprintf(stderr, "gateway: admin_key_env: environment variable %s is empty; export the admin key in it\n", cfg.AdminKeyEnv)
			return 2
		}
		if len(adminKey) < minKeyLength {
			// The admin key reads every key's traffic statistics and threads: it is held to
			// a client key's length at least.
			fmt.Fprintf(stderr, "gateway: admin_key_env: the key in %s has %d characters; use at least %d random ones (openssl rand -hex 32)\n", cfg.AdminKeyEnv, len(adminKey), minKeyLength)
			return 2
		}
	}
	keys, err := buildKeys(cfg, getenv, adminKey)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}
	var threadSecret []byte // nil: gateway.New draws one for this process
	if cfg.ThreadSaltEnv != "" {
		if threadSecret = []byte(getenv(cfg.ThreadSaltEnv)); len(threadSecret) < minKeyLength {
			fmt.Fprintf(stderr, "gateway: thread_salt_env: environment variable %s holds %d characters; export at least %d random ones in it\n", cfg.ThreadSaltEnv, len(threadSecret), minKeyLength)
			return 2
		}
	}
	pol, err := compilePolicy(cfg.Filters)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %s: %v\n", *configPath, err)
		return 2
	}

	counter, err := tokens.New(tokens.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "gateway: token counter: %v\n", err)
		return 1
	}
	st, err := openState(ctx, cfg, getenv, log)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}
	defer st.close()
	log.Info("state", "store", st.where)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var chooser gateway.Chooser
	if anyAuto(cfg) {
		cm := costModel(ups)
		if err := cm.Register(reg); err != nil {
			fmt.Fprintf(stderr, "gateway: auto strategy metrics: %v\n", err)
			return 1
		}
		learnContexts(ctx, cm, ups, firstContextRetry, log)
		chooser = &gateway.CostChooser{Model: cm}
	}
	srv := gateway.New(gateway.Options{
		Upstreams:       ups,
		Chooser:         chooser,
		MaxRequestBytes: int64(cfg.MaxRequestBytes),
		BodyTimeout:     time.Duration(cfg.Server.BodyTimeout),
		WriteTimeout:    time.Duration(cfg.Server.WriteTimeout),
		MinBodyRate:     int64(cfg.Server.MinBodyRate),
		Registry:        reg,
		Logger:          log,
		SearchTopK:      cfg.Search.TopK,
		SearchMinScore:  cfg.Search.MinScore,
		Store:           st.threads,
		Budgets:         st.budgets,
		EagerBelow:      eagerBelow(cfg.Search.EagerBelow),
		Strategy:        gateway.Strategy(cfg.Strategy),
		ToolMode:        cfg.Search.Mode,
		MaxRounds:       cfg.Search.MaxRounds,
		AutoLoad:        cfg.Search.AutoLoad,
		Progressive:     cfg.Search.Progressive,
		ClientTools:     cfg.Search.ClientTools,
		TemplateOrder:   cfg.Search.CatalogFirst != nil && !*cfg.Search.CatalogFirst,
		Policy:          pol,
		AdminKey:        adminKey,
		TrustedProxies:  cfg.Server.TrustedPrefixes(),
		RequestLog:      cfg.Admin.RequestLog,
		EventInterval:   time.Duration(cfg.Admin.EventInterval),
		Tokens:          counter,
		TracerProvider:  traces.Provider(),

		Keys:               keys,
		AnyHost:            cfg.Auth == config.AuthNone,
		ThreadSecret:       threadSecret,
		FingerprintThreads: cfg.Search.FingerprintThreads,

		HostedTools:       cfg.Doors.HostedTools,
		StoreBytes:        int64(cfg.Doors.StoreBytes),
		StoreTTL:          time.Duration(cfg.Doors.StoreTTL),
		HistoryBytes:      int64(cfg.Doors.HistoryBytes),
		BetaFlags:         cfg.Doors.BetaFlags,
		KeepaliveInterval: time.Duration(cfg.Server.KeepaliveInterval), // config.Off is negative: none
		LateStreams:       cfg.Server.EarlyEvents == "off",
		SocketsPerKey:     cfg.Doors.WebSocket.MaxPerKey,
		WebSocket: wsock.Options{
			MaxMessageBytes: int64(cfg.Doors.WebSocket.MaxMessageBytes),
			SendQueueBytes:  int64(cfg.Doors.WebSocket.SendQueueBytes),
			PingInterval:    time.Duration(cfg.Doors.WebSocket.PingInterval),
			IdleTimeout:     time.Duration(cfg.Doors.WebSocket.IdleTimeout),
		},
	})

	if st.records != nil {
		srv.SetResponseRecords(st.records, 0) // stored responses where the threads are
	}
	// Profiles, their MCP servers and the filters: built now, rebuilt on SIGHUP.
	pctx, stopProfiles := context.WithCancel(ctx)
	defer stopProfiles()
	prof := newProfiles(pctx, *configPath, getenv, transport, log)
	prof.srv = srv
	if err := prof.apply(cfg); err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 2
	}
	defer prof.close()
	prof.logCatalogs()
	go prof.run(pctx)
	if *configPath != "" {
		go reloadOnHangup(pctx, *configPath, cfg, prof, log)
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: listen: %v\n", err)
		return 1
	}
	logAuth(log, cfg, keys, ln.Addr())
	ln = gateway.LimitListener(ln, cfg.Server.MaxConnections)
	hs := newHTTPServer(srv, cfg.Server)
	hs.RegisterOnShutdown(srv.CloseEvents) // admin event streams end as the shutdown begins
	log.Info("maskgate listening", "addr", "http://"+ln.Addr().String(), "backends", len(ups))
	hctx, stopHealth := context.WithCancel(ctx) // whichever way run returns, the checks end
	defer stopHealth()
	startHealthChecks(hctx, ups)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error("serve", "error", err)
		return 1
	case <-ctx.Done():
	}
	shutdown(hs, srv, time.Duration(cfg.Server.ShutdownGrace), log)
	return 0
}

// newHTTPServer is the client-facing server with the configured limits. The body's
// limits are the gateway's (its handler paces each body); http.Server's ReadTimeout and
// WriteTimeout stay off, since they would also cut long streams.
func newHTTPServer(h http.Handler, c config.Server) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: time.Duration(c.ReadHeaderTimeout),
		IdleTimeout:       time.Duration(c.KeepAliveTimeout),
		MaxHeaderBytes:    int(c.MaxHeaderBytes),
	}
}

// afterGrace is how long the streams that Stop ends get to write their error event
// before every connection left is closed.
const afterGrace = 2 * time.Second

// shutdown stops accepting at once, lets the requests in flight finish for grace, then
// ends the rest through the gateway's Stop (error events, 503s) and, afterGrace later,
// closes whatever is still open (a client that does not read).
func shutdown(hs *http.Server, srv *gateway.Server, grace time.Duration, log *slog.Logger) {
	log.Info("shutting down: no new connections; requests in flight may finish", "grace", grace)
	stop := time.AfterFunc(grace, func() {
		log.Warn("grace period over: ending the requests still in flight", "grace", grace)
		srv.Stop()
	})
	defer stop.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), grace+afterGrace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		log.Warn("shutdown: closing the connections left", "error", err)
		hs.Close()
	}
}

// newTransport is the one upstream transport every backend shares: keep-alive pools
// sized for a gateway rather than a browser.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// probe is the container health check: distroless images have no curl.
func probe(ctx context.Context, url string, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: -healthcheck: %v\n", err)
		return 2
	}
	resp, err := newTransport().RoundTrip(req)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: health check: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "gateway: health check: %s\n", resp.Status)
		return 1
	}
	return 0
}

// anyAuto says whether the top level or any profile runs the auto strategy, which needs
// the cost model.
func anyAuto(cfg *config.Config) bool {
	if gateway.Strategy(cfg.Strategy) == gateway.StrategyAuto {
		return true
	}
	for _, p := range cfg.Profiles {
		if gateway.Strategy(p.Strategy) == gateway.StrategyAuto {
			return true
		}
	}
	return false
}

// reloadOnHangup reads the configuration again on each SIGHUP and applies its profiles,
// MCP servers and filters at once; requests in flight finish with what they started
// with. A file that does not load leaves the running configuration as it is. The rest
// (listen, backends, keys, server, doors) takes effect at the next start, and the log
// says which of those changed.
func reloadOnHangup(ctx context.Context, path string, running *config.Config, prof *profiles, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		cfg, err := config.Load(path)
		if err != nil {
			log.Error("reload refused: the running configuration stays", "error", err)
			continue
		}
		if err := prof.apply(cfg); err != nil {
			log.Error("reload refused: the running configuration stays", "error", err)
			continue
		}
		for _, k := range restartOnly(running, cfg) {
			log.Warn("changed in the file, takes effect at the next start", "key", k)
		}
		log.Info("configuration reloaded: profiles, MCP servers and filters", "file", path)
	}
}

// restartOnly names the top-level keys that differ between a and b and that a reload does
// not apply.
func restartOnly(a, b *config.Config) []string {
	var out []string
	for _, f := range []struct {
		key  string
		x, y any
	}{{"listen", a.Listen, b.Listen}, {"backends", a.Backends, b.Backends}, {"keys", a.Keys, b.Keys},
		{"server", a.Server, b.Server}, {"doors", a.Doors, b.Doors}, {"auth", a.Auth, b.Auth},
		{"admin_key_env", a.AdminKeyEnv, b.AdminKeyEnv}, {"admin", a.Admin, b.Admin}, {"max_request_bytes", a.MaxRequestBytes, b.MaxRequestBytes},
		{"search.ttl", a.Search.TTL, b.Search.TTL}} {
		if !reflect.DeepEqual(f.x, f.y) {
			out = append(out, f.key)
		}
	}
	return out
}
