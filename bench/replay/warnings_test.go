package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestWarnings_KeepsTheLastLinesOfWarningsAndAbove(t *testing.T) {
	w := new(warnings)
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log.Info("not kept")
	for i := range 12 {
		log.Warn("request failed", "n", i)
	}
	lines := strings.Split(w.String(), "\n")
	if len(lines) != 8 {
		t.Fatalf("kept %d lines, want the last 8:\n%s", len(lines), w.String())
	}
	for i, l := range lines {
		if want := fmt.Sprintf("n=%d", i+4); !strings.Contains(l, want) {
			t.Errorf("line %d is %q, want it to hold %s", i, l, want)
		}
	}
	if strings.Contains(w.String(), "not kept") {
		t.Error("an info record was kept")
	}
	// A write split inside a line is joined.
	w2 := new(warnings)
	_, _ = w2.Write([]byte("level=WARN msg=ha"))
	_, _ = w2.Write([]byte("lf\n"))
	if got := w2.String(); got != "level=WARN msg=half" {
		t.Errorf("split write kept %q", got)
	}
}
