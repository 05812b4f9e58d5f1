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
