package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway/store"
	"github.com/maskgate/maskgate/internal/redisconn"
	"github.com/maskgate/maskgate/tenant"
	"github.com/maskgate/maskgate/tenant/redislimit"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/state/redisstore"
)

// shared is where per-identity state lives, as config's state section says: threads,
// and the limits keys and profiles share.
type shared struct {
	threads state.Store
	budgets tenant.Budgets // nil: this process's own
	records store.Records  // stored responses; nil: this process's memory
	closers []func() error
	// where labels the store in the log.
	where string
}

// redactURL is u without a password, for the log.
func redactURL(u string) string {
	if pu, err := url.Parse(u); err == nil {
		return pu.Redacted()
	}
	return "(unparsable url)"
}

func (s *shared) close() {
	for _, c := range s.closers {
		c()
	}
}

// openState opens the configured store: Redis (shared by every gateway using it), files
// under data_dir (this process, across restarts), or memory. Threads idle past
// search.ttl are dropped by a sweep until ctx ends (Redis expires them itself).
func openState(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger) (*shared, error) {
	ttl := time.Duration(cfg.Search.TTL)
	sweep := ttl / 4
	if sweep <= 0 {
		sweep = time.Minute // ttl: never: nothing expires, the sweep finds nothing
	}
	st := cfg.State
	switch {
	case st.Redis.URL != "":
		password := ""
		if st.Redis.PasswordEnv != "" {
			if password = getenv(st.Redis.PasswordEnv); password == "" {
				return nil, fmt.Errorf("state.redis.password_env: environment variable %s is empty", st.Redis.PasswordEnv)
			}
		}
		prefix := st.Redis.Prefix
		if prefix == "" {
			prefix = "maskgate:"
		}
		// One client, one pool, for threads, stored responses and limits alike.
		rdb, err := redisconn.New(redisconn.Options{URL: st.Redis.URL, Password: password,
			DialTimeout: time.Duration(st.Redis.DialTimeout), ReadTimeout: time.Duration(st.Redis.ReadTimeout)})
		if err != nil {
			return nil, fmt.Errorf("state.redis: %w", err)
		}
		threads, err := redisstore.New(redisstore.Options{Client: rdb, Prefix: prefix + "thread:", TTL: ttl})
		if err == nil {
			var limits *redislimit.Limiter
			if limits, err = redislimit.New(redislimit.Options{Client: rdb, Prefix: prefix + "limit:"}); err == nil {
				var records *store.Redis
				if records, err = store.NewRedis(store.RedisOptions{Client: rdb, Prefix: prefix}); err == nil {
					return &shared{threads: threads, budgets: limits, records: records, closers: []func() error{rdb.Close},
						where: "redis " + redactURL(st.Redis.URL)}, nil
				}
			}
		}
		rdb.Close()
		return nil, fmt.Errorf("state.redis: %w", err)
	case st.DataDir != "":
		f, err := state.OpenFile(filepath.Join(st.DataDir, "threads"), state.Options{TTL: ttl})
		if err != nil {
			return nil, fmt.Errorf("state.data_dir: %w", err)
		}
		bound := int64(cfg.Doors.StoreBytes)
		if bound <= 0 {
			bound = 64 << 20 // doors.store_bytes' default, as the memory store has it
		}
		records, err := store.NewFile(filepath.Join(st.DataDir, "responses"), bound, time.Now)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("state.data_dir: %w", err)
		}
		go f.Run(ctx, sweep)
		return &shared{threads: f, records: records, closers: []func() error{f.Close, records.Close}, where: "files in " + st.DataDir}, nil
	}
	m := state.NewMemory(state.Options{TTL: ttl})
	go m.Run(ctx, sweep)
	return &shared{threads: m.Store(), where: "memory"}, nil
}
