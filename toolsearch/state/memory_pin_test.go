package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMemory_PinValueFirstWriterWins(t *testing.T) {
	m := NewMemory(Options{})
	if got := m.PinValue("t", "b1", "mask"); got != "mask" {
		t.Errorf("first pin: %q", got)
	}
	if got := m.PinValue("t", "b1", "remove"); got != "mask" {
		t.Errorf("second pin: %q, want the first's", got)
	}
	m.PinValue("t", "b2", "remove")
	s, ok := m.Get("t")
	if !ok || !cmp.Equal(s.Pins, map[string]string{"b1": "mask", "b2": "remove"}) {
		t.Errorf("pins %v, %v", s.Pins, ok)
	}
	s.Pins["b1"] = "changed"
	if s2, _ := m.Get("t"); s2.Pins["b1"] != "mask" {
		t.Error("the store changed through a snapshot's pins")
	}
	if s3, _ := m.Get("t"); s3.Loaded != nil || s3.Splices != nil {
		t.Errorf("pins made other state: %+v", s3)
	}
}

func TestMemory_PinsCountTowardSizeAndKeepAlive(t *testing.T) {
	c := newClock()
	m := NewMemory(Options{TTL: time.Hour, Now: c.Now})
	m.PinValue("t", "key", "value")
	if st := m.Stats(); st.Bytes != len("t")+threadOverhead+len("key")+len("value")+nameOverhead {
		t.Errorf("bytes %d", st.Bytes)
	}
	c.Advance(50 * time.Minute)
	m.PinValue("t", "key", "other") // an access
	c.Advance(50 * time.Minute)
	if n := m.Cleanup(); n != 0 {
		t.Error("a pin did not count as an access")
	}
	m.Delete("t")
	if st := m.Stats(); st.Bytes != 0 {
		t.Errorf("bytes %d after Delete", st.Bytes)
	}
}
