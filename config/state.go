package config

import (
	"fmt"
	"net/url"
)

// State is where per-identity state lives: threads (loaded tools, hidden exchanges,
// strategy pins), stored responses and shared rate limits. Neither set: this process's
// memory, lost at restart and not shared.
type State struct {
	// DataDir keeps threads and stored responses in files there: restart-safe and
	// crash-safe, for one gateway process (it locks the folder).
	DataDir string `yaml:"data_dir"`
	// Redis keeps them in Redis or Valkey, shared by every gateway using it: threads,
	// stored responses, key and profile limits.
	Redis Redis `yaml:"redis"`
}

// Redis names a Redis or Valkey server.
type Redis struct {
	// URL is redis://host:port/db, or rediss:// for TLS. No password in it: PasswordEnv.
	URL string `yaml:"url"`
	// PasswordEnv names the variable holding the password (AUTH).
	PasswordEnv string `yaml:"password_env"`
	// Prefix starts every key the gateway writes. Default "maskgate:".
	Prefix string `yaml:"prefix"`
	// DialTimeout bounds each new connection (default 500ms); ReadTimeout each reply and
	// the writing of each command (default 1s). A call past either fails, and what needs
	// the state answers 503 state_unavailable.
	DialTimeout Duration `yaml:"dial_timeout"`
	ReadTimeout Duration `yaml:"read_timeout"`
}

func (c *Config) validateState(file string) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Line: c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	s := c.State
	if s.DataDir != "" && s.Redis.URL != "" {
		return bad("state", "set one of data_dir (files, one gateway) and redis.url (shared by many gateways)")
	}
	if u := s.Redis.URL; u != "" {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "redis" && pu.Scheme != "rediss") || pu.Host == "" {
			return bad("state.redis.url", "write redis://HOST:PORT/DB (or rediss:// for TLS)")
		}
		if _, has := pu.User.Password(); has {
			return bad("state.redis.url", "holds a password: put it in an environment variable and name it in state.redis.password_env")
		}
		if s.Redis.DialTimeout < 0 {
			return bad("state.redis.dial_timeout", "must be positive (or left out: 500ms)")
		}
		if s.Redis.ReadTimeout < 0 {
			return bad("state.redis.read_timeout", "must be positive (or left out: 1s)")
		}
	} else if s.Redis.PasswordEnv != "" || s.Redis.Prefix != "" || s.Redis.DialTimeout != 0 || s.Redis.ReadTimeout != 0 {
		return bad("state.redis", "set state.redis.url too")
	}
	return nil
}
