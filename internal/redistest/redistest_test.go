package redistest

import "testing"

func TestStartKillRestart(t *testing.T) {
	s := Start(t, true)
	if err := s.ping(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if s.ping() == nil {
		t.Fatal("answers after Kill")
	}
	s.Restart()
	if err := s.ping(); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}

// TestStartTLS: a TLS server answers PING over TLS with its certificate trusted, and
// not in plain text on the same port.
func TestStartTLS(t *testing.T) {
	s := StartTLS(t)
	if s.TLS == nil || s.URL != "rediss://"+s.Addr+"/0" {
		t.Fatalf("URL %q, TLS %v", s.URL, s.TLS)
	}
	if err := s.ping(); err != nil {
		t.Fatal(err)
	}
	plain := &Server{Addr: s.Addr}
	if plain.ping() == nil {
		t.Fatal("a TLS-only server answered a plain PING")
	}
}
