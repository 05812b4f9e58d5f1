package redisconn

import (
	"testing"
	"time"
)

func TestNew_FailFastSettings(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no URL accepted")
	}
	if _, err := New(Options{URL: "http://x"}); err == nil {
		t.Error("a URL that is not redis:// accepted")
	}
	c, err := New(Options{URL: "redis://127.0.0.1:1/2", Password: "p", PoolSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.Options()
	if o.Addr != "127.0.0.1:1" || o.DB != 2 || o.Password != "p" || o.PoolSize != 3 {
		t.Errorf("options %+v", o)
	}
	if o.MaxRetries != 0 || o.DialerRetries != 1 || o.DialTimeout != DefaultDialTimeout ||
		o.ReadTimeout != time.Second || o.WriteTimeout != time.Second || !o.ContextTimeoutEnabled {
		t.Errorf("not fail-fast: retries %d (go-redis stores \"none\" as 0), dial retries %d, dial %v, read %v, write %v", o.MaxRetries, o.DialerRetries, o.DialTimeout, o.ReadTimeout, o.WriteTimeout)
	}
}
