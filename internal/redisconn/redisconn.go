// Package redisconn builds the one Redis client the gateway's shared state uses (threads,
// stored responses, limits): fail-fast settings, since a caller that cannot reach Redis
// answers 503 at once rather than waiting. It owns those settings and nothing else.
package redisconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Defaults.
const (
	DefaultDialTimeout = 500 * time.Millisecond
	DefaultReadTimeout = time.Second
)

// Options name the server. Zero durations are the defaults.
type Options struct {
	// URL is redis://[user:password@]host:port[/db], or rediss:// for TLS.
	URL string
	// Password, if set, overrides the URL's.
	Password    string
	TLSConfig   *tls.Config
	DialTimeout time.Duration
	// ReadTimeout bounds each reply and the writing of each command.
	ReadTimeout time.Duration
	// PoolSize is the most connections; zero, go-redis's default.
	PoolSize int
}

// New returns a client for o. It does not connect. Retries are off (a retried write might
// apply twice) and a dial is tried once.
func New(o Options) (*redis.Client, error) {
	if o.URL == "" {
		return nil, errors.New("no Redis URL")
	}
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("the Redis URL: %w", err)
	}
	if o.Password != "" {
		ro.Password = o.Password
	}
	if o.TLSConfig != nil {
		ro.TLSConfig = o.TLSConfig
	}
	ro.DialTimeout = orDefault(o.DialTimeout, DefaultDialTimeout)
	ro.ReadTimeout = orDefault(o.ReadTimeout, DefaultReadTimeout)
	ro.WriteTimeout = ro.ReadTimeout
	ro.PoolTimeout = ro.ReadTimeout
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = -1
	ro.DialerRetries = 1
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if o.PoolSize > 0 {
		ro.PoolSize = o.PoolSize
	}
	return redis.NewClient(ro), nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
