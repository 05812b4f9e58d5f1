package toolname

import (
	"strings"
	"testing"
)

func TestWire_ValidNamesAreUnchanged(t *testing.T) {
	for _, n := range []string{"get_weather", "a", "A-b_9", strings.Repeat("x", 64)} {
		if got := OpenAI.Wire(n); got != n {
			t.Errorf("Wire(%q) = %q, want it unchanged", n, got)
		}
	}
}

func TestWire_InvalidNamesBecomeValidAndDistinct(t *testing.T) {
	names := []string{"git.commit", "git/commit", "git commit", "git.commit.amend", "ünïcode", strings.Repeat("y", 65), strings.Repeat("y", 66), "."}
	seen := map[string]string{}
	for _, n := range names {
		w := OpenAI.Wire(n)
		if !OpenAI.Valid(w) {
			t.Errorf("Wire(%q) = %q, which the rule refuses", n, w)
		}
		if prev, ok := seen[w]; ok {
			t.Errorf("Wire(%q) = Wire(%q) = %q", n, prev, w)
		}
		seen[w] = n
	}
	if w := OpenAI.Wire("git.commit"); !strings.HasPrefix(w, "git_commit_") || len(w) != len("git_commit")+9 {
		t.Errorf("Wire(git.commit) = %q, want git_commit_ and eight hex digits", w)
	}
}

func TestWire_DependsOnTheNameAlone(t *testing.T) {
	a, err := New(OpenAI, []string{"fs.read", "x"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(OpenAI, []string{"y", "z.z", "fs.read"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Wire("fs.read") != b.Wire("fs.read") {
		t.Errorf("fs.read maps to %q in one catalog and %q in another", a.Wire("fs.read"), b.Wire("fs.read"))
	}
}

func TestMap_RoundTrips(t *testing.T) {
	names := []string{"git.commit", "get_file", "mcp:files/read", strings.Repeat("ns.", 30) + "tool"}
	m, err := New(OpenAI, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if got := m.Real(m.Wire(n)); got != n {
			t.Errorf("Real(Wire(%q)) = %q", n, got)
		}
	}
	if got := m.Real("never_seen"); got != "never_seen" {
		t.Errorf("Real of an unknown name = %q, want it unchanged", got)
	}
}

func TestNew_NilWhenNothingToMap(t *testing.T) {
	m, err := New(OpenAI, []string{"a", "b_c"})
	if err != nil || m != nil {
		t.Fatalf("New = %v, %v; want nil, nil", m, err)
	}
	if !m.Empty() || m.Wire("a.b") != "a.b" || m.Real("x") != "x" {
		t.Error("a nil Map must map every name to itself")
	}
}

func TestNew_RefusesACollisionWithARealName(t *testing.T) {
	w := OpenAI.Wire("git.commit")
	if _, err := New(OpenAI, []string{"git.commit", w}); err == nil {
		t.Fatalf("New accepted %q beside git.commit, which maps to it", w)
	}
	if _, err := New(OpenAI, []string{w, "git.commit"}); err == nil {
		t.Fatalf("New accepted %q before git.commit, which maps to it", w)
	}
}

func FuzzWire(f *testing.F) {
	for _, s := range []string{"git.commit", "", "a", "é", strings.Repeat(".", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		w := OpenAI.Wire(n)
		if !OpenAI.Valid(w) {
			t.Fatalf("Wire(%q) = %q is refused by the rule", n, w)
		}
		if OpenAI.Valid(n) && w != n {
			t.Fatalf("valid %q changed to %q", n, w)
		}
	})
}
