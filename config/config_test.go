package config

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse_ErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // exact error text
	}{
		{"unknown top-level key", "listen: 127.0.0.1:1\nbackend: []\n",
			"g.yaml:2: backend: unknown key (known keys here: listen, max_request_bytes, backends, tools, profiles, mcp_servers, state, search, strategy, filters, admin_key_env, admin, server, doors, auth, keys, thread_salt_env)"},
		{"unknown nested key", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    modles: [m]\n",
			"g.yaml:5: backends[0].modles: unknown key (known keys here: name, kind, url, urls, api_key_env, models, format, timeout, idle_timeout, max_response_bytes, max_event_bytes, health_interval, model, threads, reasoning_field, context_window, max_in_flight, max_queue, queue_timeout, routing)"},
		{"missing url", "backends:\n  - name: a\n    kind: ollama\n    models: [m]\n",
			"g.yaml:2: backends[0].url: required: the ollama server's address, e.g. http://127.0.0.1:11434"},
		{"bad url", "backends:\n  - name: a\n    kind: vllm\n    url: localhost:8000\n    models: [m]\n",
			`g.yaml:4: backends[0].url: "localhost:8000" is not an http(s) URL, e.g. http://127.0.0.1:8000/v1`},
		{"duplicate names", "backends:\n  - {name: a, kind: vllm, url: 'http://x/v1', models: [m]}\n  - {name: a, kind: vllm, url: 'http://y/v1', models: [n]}\n",
			"g.yaml:3: backends[1].name: duplicate backend name \"a\" (also backends[0])"},
		{"bad duration", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    timeout: 5 minutes\n",
			`g.yaml:6: backends[0].timeout: invalid duration "5 minutes": write it like 30s, 10m or 1h`},
		{"bad ttl", "search:\n  ttl: forever\n",
			`g.yaml:2: search.ttl: invalid duration "forever": write it like 30s, 10m or 1h`},
		{"unknown kind", "backends:\n  - {name: a, kind: tgi, url: 'http://x', models: [m]}\n",
			`g.yaml:2: backends[0].kind: unknown kind "tgi" (one of llamacpp, vllm, sglang, ollama, openai, anthropic, embedded)`},
		{"bad reasoning_field", "backends:\n  - {name: a, kind: vllm, url: 'http://x/v1', models: [m], reasoning_field: thoughts}\n",
			`g.yaml:2: backends[0].reasoning_field: must be reasoning or reasoning_content (or left out to detect)`},
		{"no models", "backends:\n  - {name: a, kind: vllm, url: 'http://x/v1'}\n",
			`g.yaml:2: backends[0].models: required: list the model names routed here, or "*" for any`},
		{"wrong type", "search:\n  top_k: many\n", `g.yaml:2: search.top_k: expected an integer, got "many"`},
		{"list expected", "backends: {name: a}\n", "g.yaml:1: backends: expected a list"},
		{"bad strategy", "strategy: fast\n",
			`g.yaml:1: strategy: unknown strategy "fast" (one of auto, eager, mask, allowed_tools, remove, validate, index)`},
		{"bad size", "max_request_bytes: lots\n",
			`g.yaml:1: max_request_bytes: invalid size "lots": write bytes (1048576) or a size such as 16MiB`},
		{"storage is gone", "search: {storage: context}\n",
			"g.yaml:1: search.storage: unknown key"},
		{"bad scorer", "search: {scorer: vector}\n", `g.yaml:1: search.scorer: unknown scorer "vector" (bm25 or keyword)`},
		{"embeddings without model", "search:\n  embeddings: {url: 'http://127.0.0.1:8080/v1'}\n",
			"g.yaml:2: search.embeddings.model: required with search.embeddings.url"},
		{"repeated key", "listen: a\nlisten: b\n", "g.yaml:2: listen: key appears twice"},
		{"not yaml", "backends: [\n", "g.yaml:1: did not find expected node content"},
		{"not a mapping", "- a\n", "g.yaml:1: the file must be a mapping of keys (listen, backends, ...)"},
		{"unknown filter phase", "filters:\n  - name: a\n    phases: [search, hide]\n    tools: ['git.*']\n",
			`g.yaml:3: filters[0].phases[1]: unknown phase "hide" (one of search, load, active)`},
		{"filter without phases", "filters:\n  - tools: [x]\n  - name: b\n    tools: [y]\n",
			"g.yaml:2: filters[0].phases: required: list the phases the rule denies in (search, load, active)"},
		{"filter header without name", "filters:\n  - phases: [load]\n    headers:\n      - value: prod\n",
			"g.yaml:4: filters[0].headers[0].name: required: the header name to match"},
		{"unknown filter key", "filters:\n  - phases: [load]\n    tool: [x]\n",
			"g.yaml:3: filters[0].tool: unknown key (known keys here: name, phases, profiles, headers, metadata, tools, namespaces, when)"},
		{"url and urls", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    urls: [http://y/v1]\n    models: [m]\n",
			"g.yaml:5: backends[0].urls: set url or urls, not both"},
		{"empty urls", "backends:\n  - name: a\n    kind: vllm\n    urls: []\n    models: [m]\n",
			"g.yaml:4: backends[0].urls: empty: list each replica's address, e.g. [http://127.0.0.1:8000/v1]"},
		{"bad replica url", "backends:\n  - name: a\n    kind: llamacpp\n    urls:\n      - http://gpu0:8080\n      - gpu1:8080\n    models: [m]\n",
			`g.yaml:6: backends[0].urls[1]: "gpu1:8080" is not an http(s) URL, e.g. http://127.0.0.1:8080`},
		{"repeated replica", "backends:\n  - name: a\n    kind: sglang\n    urls: ['http://g:30000/v1', 'http://h:30000/v1', 'http://g:30000/v1/']\n    models: [m]\n",
			`g.yaml:4: backends[0].urls[2]: "http://g:30000/v1/" is listed twice (also urls[0])`},
		{"urls on embedded", "backends:\n  - name: a\n    kind: embedded\n    model: m.gguf\n    urls: [http://x]\n    models: [m]\n",
			"g.yaml:5: backends[0].urls: kind embedded runs in this process; it has no urls"},
		{"threads below zero", "backends:\n  - name: a\n    kind: embedded\n    model: m.gguf\n    threads: -1\n    models: [m]\n",
			"g.yaml:5: backends[0].threads: -1: the engine's CPU threads, 0 (one per core) or more"},
		{"threads on a served engine", "backends:\n  - name: a\n    kind: llamacpp\n    url: http://x\n    threads: 4\n    models: [m]\n",
			"g.yaml:5: backends[0].threads: applies only to kind embedded"},
		{"urls not a list", "backends:\n  - name: a\n    kind: vllm\n    urls: http://x/v1\n    models: [m]\n",
			"g.yaml:4: backends[0].urls: expected a list"},
		{"health_interval without urls", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    health_interval: 1s\n",
			"g.yaml:6: backends[0].health_interval: applies only with urls"},
		{"bad health_interval", "backends:\n  - name: a\n    kind: vllm\n    urls: [http://x/v1]\n    models: [m]\n    health_interval: often\n",
			`g.yaml:6: backends[0].health_interval: invalid duration "often": write it like 30s, 10m or 1h`},
		{"missing url names urls too", "backends:\n  - {name: a, kind: vllm, models: [m]}\n",
			"g.yaml:2: backends[0].url: required: the vllm server's address, e.g. http://127.0.0.1:8000/v1 (or urls: a list, for several replicas of one engine)"},
		{"bad search mode", "search:\n  mode: both\n", `g.yaml:2: search.mode: unknown mode "both" (server or client)`},
		{"negative max_rounds", "search:\n  max_rounds: -1\n", "g.yaml:2: search.max_rounds: must be positive"},
		{"routing hint value without a header", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n      hint_value: thread\n",
			"g.yaml:7: backends[0].routing.hint_value: applies only with hint_header, session_token or nvext.session_control: name where the router reads it"},
		{"routing hint header not a token", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n      hint_header: x session\n",
			`g.yaml:7: backends[0].routing.hint_header: "x session" is not a header name`},
		{"routing hint on a header the request needs", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n      hint_header: Authorization\n",
			"g.yaml:7: backends[0].routing.hint_header: Authorization is a header the request itself needs"},
		{"routing hint value unknown", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n      hint_header: x-session-id\n      hint_value: user\n",
			"g.yaml:8: backends[0].routing.hint_value: must be thread or caller (or left out for thread)"},
		{"routing hint on the embedded engine", "backends:\n  - name: a\n    kind: embedded\n    model: m.gguf\n    models: [m]\n    routing:\n      hint_header: x-session-id\n",
			"g.yaml:7: backends[0].routing.hint_header: kind embedded runs in this process"},
		{"unknown routing key", "backends:\n  - name: a\n    kind: vllm\n    url: http://x/v1\n    models: [m]\n    routing:\n      header: x\n",
			"g.yaml:7: backends[0].routing.header: unknown key (known keys here: hint_header, hint_value, session_token, nvext)"},
		{"unknown admin key", "admin:\n  request_logs: 10\n",
			"g.yaml:2: admin.request_logs: unknown key (known keys here: request_log, event_interval)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("g.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not *config.Error", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParse_DefaultsFillZeroValues(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("backends:\n  - {name: a, kind: llamacpp, url: 'http://127.0.0.1:8080', models: ['*']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Listen:          DefaultListen,
		MaxRequestBytes: DefaultMaxRequestBytes,
		Strategy:        "auto",
		Backends: []Backend{{Name: "a", Kind: "llamacpp", URL: "http://127.0.0.1:8080", Models: []string{"*"},
			Timeout: Duration(10 * time.Minute), IdleTimeout: Duration(time.Minute), MaxResponseBytes: 64 << 20, MaxEventBytes: 8 << 20,
			MaxInFlight: 256, MaxQueue: 1024, QueueTimeout: Duration(30 * time.Second)}},
		Search: Search{TopK: 5, TTL: Duration(time.Hour),
			Mode: "server", MaxRounds: 4, EagerBelow: ptr(20), ClientTools: "callable", Scorer: "bm25"},
		Admin: Admin{RequestLog: 1000, EventInterval: Duration(time.Second)},
		Server: Server{ReadHeaderTimeout: Duration(10 * time.Second), BodyTimeout: Duration(10 * time.Second), MinBodyRate: 64 << 10,
			WriteTimeout: Duration(30 * time.Second), KeepAliveTimeout: Duration(75 * time.Second), MaxHeaderBytes: 64 << 10, MaxConnections: 4096, ShutdownGrace: Duration(25 * time.Second),
			KeepaliveInterval: Duration(15 * time.Second), EarlyEvents: "on"},
	}
	if diff := cmp.Diff(want, cfg, cmp.AllowUnexported(Config{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".lines"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestParse_SizesAndDurations(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("max_request_bytes: 2MiB\nsearch: {ttl: 90s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxRequestBytes != 2<<20 {
		t.Errorf("max_request_bytes = %d, want %d", cfg.MaxRequestBytes, 2<<20)
	}
	if time.Duration(cfg.Search.TTL) != 90*time.Second {
		t.Errorf("ttl = %v", time.Duration(cfg.Search.TTL))
	}
	cfg, err = Parse("g.yaml", []byte("max_request_bytes: 1000\n"))
	if err != nil || cfg.MaxRequestBytes != 1000 {
		t.Errorf("plain bytes: %v, %d", err, cfg.MaxRequestBytes)
	}
}

func TestParse_FiltersAndSearchModes(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(`admin_key_env: MASKGATE_ADMIN_KEY
search: {mode: client, progressive: true, max_rounds: 2, eager_below: 1}
filters:
  - name: no shell in prod
    phases: [load, active]
    profiles: ["team-*"]
    headers: [{name: X-Environment, value: "prod*"}]
    metadata: [{name: tier}]
    tools: ["shell.*"]
    namespaces: [github]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Filter{{Name: "no shell in prod", Phases: []string{"load", "active"}, Profiles: []string{"team-*"},
		Headers: []FilterMatch{{Name: "X-Environment", Value: "prod*"}}, Metadata: []FilterMatch{{Name: "tier"}},
		Tools: []string{"shell.*"}, Namespaces: []string{"github"}}}
	if diff := cmp.Diff(want, cfg.Filters); diff != "" {
		t.Errorf("filters (-want +got):\n%s", diff)
	}
	if cfg.AdminKeyEnv != "MASKGATE_ADMIN_KEY" {
		t.Errorf("admin_key_env = %q", cfg.AdminKeyEnv)
	}
	s := cfg.Search
	if s.Mode != "client" || !s.Progressive || s.MaxRounds != 2 || s.EagerBelow == nil || *s.EagerBelow != 1 {
		t.Errorf("search = %+v", s)
	}
}

func TestParse_EmptyFileIsDefaults(t *testing.T) {
	cfg, err := Parse("g.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != DefaultListen || len(cfg.Backends) != 0 {
		t.Errorf("got %+v", cfg)
	}
}

func TestLoad_ExampleFilesAreValid(t *testing.T) {
	for _, f := range []string{"../examples/gateway.yaml", "../examples/openai.yaml", "../examples/docker.yaml"} {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestParse_URLsListReplicasWithAHealthInterval(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(`backends:
  - name: pool
    kind: vllm
    urls: ["http://gpu0:8000/v1", "http://gpu1:8000/v1"]
    models: [qwen]
  - name: tuned
    kind: llamacpp
    urls: ["http://127.0.0.1:8081"]
    health_interval: 250ms
    models: [llama]
  - name: single
    kind: ollama
    url: http://127.0.0.1:11434
    models: ["*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		URL    string
		URLs   []string
		Health time.Duration
	}
	var have []got
	for _, b := range cfg.Backends {
		have = append(have, got{b.URL, b.URLs, time.Duration(b.HealthInterval)})
	}
	want := []got{
		{"", []string{"http://gpu0:8000/v1", "http://gpu1:8000/v1"}, DefaultHealthInterval},
		{"", []string{"http://127.0.0.1:8081"}, 250 * time.Millisecond},
		{"http://127.0.0.1:11434", nil, 0},
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
}

func TestParse_ServerLimitsAndUpstreamLimits(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte(`server:
  read_header_timeout: 5s
  body_timeout: 20s
  min_body_rate: 16KiB
  write_timeout: 15s
  keepalive_timeout: 30s
  max_header_bytes: 32KiB
  max_connections: 100
  shutdown_grace: 8s
  keepalive_interval: 5s
  early_events: off
backends:
  - {name: a, kind: vllm, url: 'http://x/v1', models: [m], idle_timeout: 2m, max_response_bytes: 1MiB, max_event_bytes: 512KiB}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Server{ReadHeaderTimeout: Duration(5 * time.Second), BodyTimeout: Duration(20 * time.Second), MinBodyRate: 16 << 10,
		WriteTimeout: Duration(15 * time.Second), KeepAliveTimeout: Duration(30 * time.Second), MaxHeaderBytes: 32 << 10, MaxConnections: 100, ShutdownGrace: Duration(8 * time.Second),
		KeepaliveInterval: Duration(5 * time.Second), EarlyEvents: "off"}
	if diff := cmp.Diff(want, cfg.Server); diff != "" {
		t.Errorf("server (-want +got):\n%s", diff)
	}
	b := cfg.Backends[0]
	if b.IdleTimeout != Duration(2*time.Minute) || b.MaxResponseBytes != 1<<20 || b.MaxEventBytes != 512<<10 {
		t.Errorf("backend limits: %+v", b)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"server: {max_connections: -1}\n", "g.yaml:1: server.max_connections: must be positive"},
		{"server:\n  body_timeout: 5s\n  write_timeout: 500ms\n", "g.yaml:3: server.write_timeout: must be at least 1s (a client may take a moment to read)"},
		{"server:\n  keepalive_interval: 200ms\n", "g.yaml:2: server.keepalive_interval: must be at least 1s, or off"},
		{"server:\n  keepalive_interval: never\n", `g.yaml:2: server.keepalive_interval: invalid duration "never": write it like 30s, 10m or 1h`},
		{"server:\n  read_header_timeout: 5s\n  early_events: soon\n", `g.yaml:3: server.early_events: unknown value "soon" (on or off)`},
		{"server:\n  shutdown_grace: 5 seconds\n", `g.yaml:2: server.shutdown_grace: invalid duration "5 seconds": write it like 30s, 10m or 1h`},
		{"backends:\n  - {name: a, kind: vllm, url: 'http://x/v1', models: [m], max_event_bytes: 2GiB}\n", "g.yaml:2: backends[0].max_event_bytes: must be at most 1GiB"},
	} {
		if _, err := Parse("g.yaml", []byte(bad.yaml)); err == nil || err.Error() != bad.want {
			t.Errorf("%q: err %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

func TestParse_Doors(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("backends: [{name: a, kind: openai, url: 'http://x/v1', models: ['*']}]\ndoors:\n  hosted_tools: refuse\n  store_bytes: 1MiB\n  store_ttl: 5m\n  websocket: {max_message_bytes: 64KiB, idle_timeout: 30s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Doors
	if d.HostedTools != "refuse" || d.StoreBytes != 1<<20 || time.Duration(d.StoreTTL) != 5*time.Minute ||
		d.WebSocket.MaxMessageBytes != 64<<10 || time.Duration(d.WebSocket.IdleTimeout) != 30*time.Second {
		t.Errorf("doors %+v", d)
	}
	_, err = Parse("g.yaml", []byte("backends: [{name: a, kind: openai, url: 'http://x/v1', models: ['*']}]\ndoors:\n  hosted_tools: run\n"))
	if err == nil || !strings.Contains(err.Error(), `g.yaml:3: doors.hosted_tools: unknown value "run" (drop or refuse)`) {
		t.Errorf("error %v", err)
	}
}

// The admin block sizes the request log and paces the event stream: values in range are
// kept as written, zero is the default, and each out-of-range value is an error naming
// its line and key.
func TestParse_Admin(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       Admin
		err        string // exact error text; "" for none
	}{
		{"defaults", "admin_key_env: K\n", Admin{RequestLog: 1000, EventInterval: Duration(time.Second)}, ""},
		{"set", "admin:\n  request_log: 50\n  event_interval: 250ms\n", Admin{RequestLog: 50, EventInterval: Duration(250 * time.Millisecond)}, ""},
		{"bounds", "admin: {request_log: 1000000, event_interval: 10ms}\n", Admin{RequestLog: 1_000_000, EventInterval: Duration(10 * time.Millisecond)}, ""},
		{"longest interval", "admin: {event_interval: 1m}\n", Admin{RequestLog: 1000, EventInterval: Duration(time.Minute)}, ""},
		{"negative log", "admin:\n  request_log: -1\n", Admin{}, "g.yaml:2: admin.request_log: must be between 1 and 1000000 requests (it is held in memory)"},
		{"log too large", "admin:\n  event_interval: 2s\n  request_log: 2000000\n", Admin{}, "g.yaml:3: admin.request_log: must be between 1 and 1000000 requests (it is held in memory)"},
		{"interval too short", "admin:\n  event_interval: 1ms\n", Admin{}, "g.yaml:2: admin.event_interval: must be between 10ms and 1m0s"},
		{"interval too long", "admin: {event_interval: 2m}\n", Admin{}, "g.yaml:1: admin.event_interval: must be between 10ms and 1m0s"},
		{"interval not a duration", "admin:\n  event_interval: often\n", Admin{}, `g.yaml:2: admin.event_interval: invalid duration "often": write it like 30s, 10m or 1h`},
		{"log not a number", "admin:\n  request_log: many\n", Admin{}, `g.yaml:2: admin.request_log: expected an integer, got "many"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("g.yaml", []byte(tt.yaml))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Admin != tt.want {
				t.Errorf("admin %+v, want %+v", cfg.Admin, tt.want)
			}
		})
	}
}

func TestParse_KeepaliveOff(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("server:\n  keepalive_interval: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.KeepaliveInterval != Off || cfg.Server.EarlyEvents != "on" {
		t.Errorf("keepalive_interval %v, early_events %q; want off and on", time.Duration(cfg.Server.KeepaliveInterval), cfg.Server.EarlyEvents)
	}
}

func TestParse_RoutingHint(t *testing.T) {
	c, err := Parse("g.yaml", []byte("backends:\n  - name: a\n    kind: vllm\n    urls: [http://x/v1]\n    models: [m]\n    routing:\n      hint_header: x-session-id\n      hint_value: caller\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Backends[0].Routing, (Routing{HintHeader: "x-session-id", HintValue: "caller"}); got != want {
		t.Errorf("routing %+v, want %+v", got, want)
	}
}

func ptr(n int) *int { return &n }

// TestParse_EagerBelowUnsetIsTwentyZeroIsOff: eager_below unset is the default, 20; 0
// is kept as 0 (off), at the top level and in a profile, which otherwise takes the top
// level's; a negative value is refused, located.
func TestParse_EagerBelowUnsetIsTwentyZeroIsOff(t *testing.T) {
	for _, f := range []struct {
		yaml string
		want []int // top level, then each profile
	}{
		{"search: {eager_below: 0}\nprofiles:\n  - name: inherits\n  - name: own\n    search: {eager_below: 7}\n", []int{0, 0, 7}},
		{"profiles:\n  - name: unset\n  - name: off\n    search: {eager_below: 0}\n", []int{20, 20, 0}},
	} {
		cfg, err := Parse("g.yaml", []byte(f.yaml))
		if err != nil {
			t.Fatal(err)
		}
		got := []*int{cfg.Search.EagerBelow}
		for _, p := range cfg.Profiles {
			got = append(got, p.Search.EagerBelow)
		}
		if len(got) != len(f.want) {
			t.Fatalf("%q: %d profiles, want %d", f.yaml, len(got)-1, len(f.want)-1)
		}
		for i, want := range f.want {
			if got[i] == nil || *got[i] != want {
				t.Errorf("%q: eager_below #%d (0 the top level, then each profile) = %v, want %d", f.yaml, i, got[i], want)
			}
		}
	}
	var err error
	_, err = Parse("g.yaml", []byte("profiles:\n  - name: p\n    search:\n      eager_below: -1\n"))
	if err == nil || !strings.Contains(err.Error(), "g.yaml:4: profiles[0].search.eager_below") {
		t.Errorf("a negative eager_below: %v; want it refused at g.yaml:4, naming the key", err)
	}
}

func TestParse_RedisTimeouts(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("state:\n  redis: {url: 'redis://127.0.0.1:6379/0', dial_timeout: 2s, read_timeout: 30s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.State.Redis; time.Duration(r.DialTimeout) != 2*time.Second || time.Duration(r.ReadTimeout) != 30*time.Second {
		t.Errorf("dial_timeout %v, read_timeout %v; want 2s and 30s", time.Duration(r.DialTimeout), time.Duration(r.ReadTimeout))
	}
	_, err = Parse("g.yaml", []byte("state:\n  redis:\n    read_timeout: 30s\n"))
	if want := "g.yaml:2: state.redis: set state.redis.url too"; err == nil || err.Error() != want {
		t.Errorf("a timeout without a url: %v, want %q", err, want)
	}
}

func TestParse_TrustedProxies(t *testing.T) {
	cfg, err := Parse("g.yaml", []byte("server:\n  trusted_proxies: [10.0.0.0/8, 192.0.2.7, '2001:db8::/32', 10.1.2.3/8]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Server.TrustedPrefixes()
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("10.0.0.0/8")}
	if !slices.Equal(got, want) {
		t.Errorf("prefixes %v, want %v", got, want)
	}
	if _, err := Parse("g.yaml", []byte("server:\n  trusted_proxies: [proxy.internal]\n")); err == nil ||
		err.Error() != `g.yaml:2: server.trusted_proxies: "proxy.internal" is neither an IP address nor a CIDR prefix (10.0.0.0/8)` {
		t.Errorf("a host name: %v", err)
	}
}
