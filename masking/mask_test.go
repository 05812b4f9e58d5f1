package masking

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// emit feeds toks to st, failing the test if any is not allowed or not accepted.
func emit(t *testing.T, st *State, toks []int, l *llama) {
	t.Helper()
	for i, tok := range toks {
		if !st.Allowed().Has(tok) {
			t.Fatalf("token %d (%q) at %d of %q not allowed in phase %s", tok, l.vocab.Pieces[tok], i, detok(l, toks), st.Phase())
		}
		if err := st.Accept(tok); err != nil {
			t.Fatalf("Accept: %v", err)
		}
	}
}

func detok(l *llama, toks []int) string {
	var b strings.Builder
	for _, t := range toks {
		b.Write(l.vocab.Pieces[t])
	}
	return b.String()
}

func compile(t testing.TB, l *llama, spec Spec) *Mask {
	t.Helper()
	if spec.Format == (Format{}) {
		spec.Format = Hermes()
	}
	m, err := Compile(l.ix, spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// walkName follows random allowed tokens from just after the trigger until
// the name is closed, and returns the name. It fails on a dead end.
func walkName(t *testing.T, st *State, r *rand.Rand, l *llama) (string, bool) {
	t.Helper()
	var text []byte
	var ids []int32
	for steps := 0; steps < 200; steps++ {
		if st.Phase() == PhaseArguments {
			s := strings.TrimPrefix(string(text), "\n{\"name\": \"")
			name, _, ok := strings.Cut(s, "\", \"arguments\": ")
			if !ok {
				t.Fatalf("closed call without NameClose: %q", text)
			}
			return name, true
		}
		set := st.Allowed()
		if set.Count() == 0 {
			t.Fatalf("dead end after %q", text)
		}
		ids = set.AppendIDs(ids[:0])
		tok := int(ids[r.IntN(len(ids))])
		if err := st.Accept(tok); err != nil {
			t.Fatalf("allowed token refused: %v", err)
		}
		text = append(text, l.vocab.Pieces[tok]...)
	}
	return "", false
}

func TestMask_NamesThatArePrefixesOfOthers(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"get_file", "get_files", "git.commit", "git.config"}})
	for _, name := range []string{"get_file", "get_files", "git.commit", "git.config"} {
		st := m.NewState()
		emit(t, &st, []int{l.toolCall}, l)
		emit(t, &st, l.tokenize(callText(name), nil), l)
		emit(t, &st, []int{l.endCall}, l)
		if st.Phase() != PhaseText {
			t.Errorf("%s: phase %s after the call, want text", name, st.Phase())
		}
	}
	for _, bad := range []string{"get_fil", "get_filesystem", "git", "git.co", "get_filex"} {
		st := m.NewState()
		emit(t, &st, []int{l.toolCall}, l)
		toks := l.tokenize(callText(bad), nil)
		ok := true
		for _, tok := range toks {
			if st.Accept(tok) != nil {
				ok = false
				break
			}
		}
		if ok {
			t.Errorf("disabled name %q accepted", bad)
		}
	}
}

func TestMask_DisabledSharedPrefixNotBannedInText(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"get_files"}})
	st := m.NewState()
	if !st.Allowed().All() {
		t.Fatal("free text is constrained")
	}
	emit(t, &st, l.tokenize("I will get_file and git.commit now. ", nil), l)
	emit(t, &st, []int{l.toolCall}, l)
	emit(t, &st, l.tokenize("\n{\"name\": \"get_", nil), l)
	if st.Allowed().All() || st.Allowed().Count() == 0 {
		t.Fatalf("inside the name: %d allowed", st.Allowed().Count())
	}
}

func TestMask_TextTriggerAndBoundaryTokens(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"read", "read_file"}})
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		name := []string{"read", "read_file"}[i%2]
		st := m.NewState()
		// The trigger typed as text, tokens spanning every boundary.
		text := "ok <tool_call>" + callText(name) + "</tool_call> done"
		emit(t, &st, l.tokenize(text, r), l)
		if st.Phase() != PhaseText {
			t.Fatalf("phase %s after %q", st.Phase(), text)
		}
	}
}

func TestMask_RequiredStartsWithTrigger(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"search"}, Mode: ModeRequired})
	st := m.NewState()
	set := st.Allowed()
	if !set.Has(l.toolCall) || set.Has(l.base+tokEOT) || set.Has(l.tokenize("Hello", nil)[0]) {
		t.Fatal("required mode must allow the trigger and nothing else to start")
	}
	lt := l.tokenize("<", nil)[0]
	if !set.Has(lt) {
		t.Fatal("a text token that begins the trigger is refused")
	}
	emit(t, &st, []int{l.toolCall}, l)
	emit(t, &st, l.tokenize(callText("search")+"</tool_call>", nil), l)
	if !st.Allowed().All() {
		t.Error("after the call, text is constrained")
	}
}

func TestMask_SpecifiedNamespace(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"browser_open", "browser_click", "bash"}, Mode: ModeSpecified, Namespace: "browser_"})
	if got := m.Names(); slices.Contains(got, "bash") || len(got) != 2 {
		t.Fatalf("names %v", got)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		st := m.NewState()
		emit(t, &st, []int{l.toolCall}, l)
		name, ok := walkName(t, &st, r, l)
		if ok && !strings.HasPrefix(name, "browser_") {
			t.Fatalf("specified mode emitted %q", name)
		}
	}
}

func TestMask_EmptyAutoSetCannotStartCall(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{})
	st := m.NewState()
	if st.Allowed().Has(l.toolCall) {
		t.Fatal("trigger allowed with no allowed names")
	}
	err := st.Accept(l.toolCall)
	if !errors.Is(err, ErrDisallowed) {
		t.Fatalf("Accept = %v, want ErrDisallowed", err)
	}
	if _, err := Compile(l.ix, Spec{Format: Hermes(), Mode: ModeRequired}); err == nil {
		t.Fatal("required with no names compiled")
	}
}

func TestCompile_RejectsNamesNeedingEscapes(t *testing.T) {
	l := loadLlama(t)
	for _, n := range []string{"", "a\"b", "a\\b", "a\nb", "\xff"} {
		if _, err := Compile(l.ix, Spec{Format: Hermes(), Allowed: []string{n}}); err == nil {
			t.Errorf("name %q compiled", n)
		}
	}
}

func TestAccept_DisallowedLeavesStateUnchanged(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"get_file"}})
	st := m.NewState()
	emit(t, &st, []int{l.toolCall}, l)
	before := st
	for _, tok := range []int{l.tokenize("Hello", nil)[0], l.base + tokEOT, -1, l.ix.Len()} {
		if err := st.Accept(tok); !errors.Is(err, ErrDisallowed) {
			t.Errorf("Accept(%d) = %v", tok, err)
		}
		if st != before {
			t.Fatal("state moved on a refused token")
		}
	}
}

func TestCache_LRU(t *testing.T) {
	l := loadLlama(t)
	c := &Cache{Max: 2}
	spec := func(names ...string) Spec { return Spec{Format: Hermes(), Allowed: names} }
	a, _ := c.Get(l.ix, spec("a", "b"))
	a2, _ := c.Get(l.ix, spec("b", "a", "a"))
	if a != a2 {
		t.Fatal("same set in another order missed the cache")
	}
	c.Get(l.ix, spec("c"))
	c.Get(l.ix, spec("d"))
	if c.Len() != 2 {
		t.Fatalf("Len = %d", c.Len())
	}
	if a3, _ := c.Get(l.ix, spec("a", "b")); a3 == a {
		t.Fatal("evicted mask returned")
	}
	r1, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: []string{"a"}, Mode: ModeRequired})
	r2, _ := c.Get(l.ix, Spec{Format: Hermes(), Allowed: []string{"a"}})
	if r1 == r2 {
		t.Fatal("mode not in the key")
	}
}

// TestSet_MatchesAccept checks, token by token, that the memoized set is
// exactly what Accept takes, in every state a few calls pass through.
func TestSet_MatchesAccept(t *testing.T) {
	l := loadLlama(t)
	m := compile(t, l, Spec{Allowed: []string{"get_file", "get_files", "git.commit", "日本"}})
	r := rand.New(rand.NewPCG(5, 6))
	st := m.NewState()
	toks := append([]int{l.toolCall}, l.tokenize(callText("get_files")+"</tool_call>x<tool_call>"+callText("日本"), r)...)
	for _, tok := range toks {
		set := st.Allowed()
		for id := range l.ix.Len() {
			probe := st
			if (probe.Accept(id) == nil) != set.Has(id) {
				t.Fatalf("phase %s token %d (%q): Accept and Has disagree", st.Phase(), id, l.vocab.Pieces[id])
			}
		}
		if err := st.Accept(tok); err != nil {
			t.Fatal(err)
		}
	}
}
