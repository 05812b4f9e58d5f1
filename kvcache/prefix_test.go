package kvcache

import (
	"fmt"
	"sync"
	"testing"
)

func TestPrefixMatch_TokensRoundsDown(t *testing.T) {
	for _, tc := range []struct {
		m      PrefixMatch
		tokens int
		want   int
	}{
		{PrefixMatch{Matched: 0, Total: 10}, 100, 0},
		{PrefixMatch{Matched: 10, Total: 10}, 100, 100},
		{PrefixMatch{Matched: 5, Total: 10}, 100, 50},
		{PrefixMatch{Matched: 1, Total: 3}, 100, 33},  // 33.33
		{PrefixMatch{Matched: 2, Total: 3}, 100, 66},  // 66.67, not 67
		{PrefixMatch{Matched: 7, Total: 8}, 9, 7},     // 7.875
		{PrefixMatch{Matched: 3, Total: 0}, 9, 0},     // empty prompt
		{PrefixMatch{Matched: 3, Total: 4}, 0, 0},     // no tokens reported
		{PrefixMatch{Matched: 12, Total: 10}, 10, 10}, // never more than the prompt
	} {
		if got := tc.m.Tokens(tc.tokens); got != tc.want {
			t.Errorf("%+v.Tokens(%d) = %d, want %d", tc.m, tc.tokens, got, tc.want)
		}
	}
}

func TestPrefixEstimator_LongestCommonPrefixOfAnyRemembered(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{})
	e.Remember("m", []byte("system:you are terse|user:hello"))
	e.Remember("m", []byte("system:you are kind|user:hi"))
	e.Remember("other", []byte("system:you are terse|user:hello there, friend"))

	for _, tc := range []struct {
		prompt string
		want   int
	}{
		// "system:you are " is 15 bytes; "terse|user:hello" continues to 31.
		{"system:you are terse|user:hello|assistant:hey", 31},
		{"system:you are kind|user:bye", 25}, // "system:you are kind|user:" = 25
		{"system:you are bold", 15},
		{"nothing in common", 0},
		{"system:you are terse|user:hello", 31}, // identical
		{"sys", 3},                              // shorter than what is remembered
	} {
		got := e.Estimate("m", []byte(tc.prompt))
		want := PrefixMatch{Matched: tc.want, Total: len(tc.prompt)}
		if got != want {
			t.Errorf("Estimate(%q) = %+v, want %+v", tc.prompt, got, want)
		}
	}
	if got := e.Estimate("unknown", []byte("system:you are terse")); got.Matched != 0 {
		t.Errorf("a model never seen matched %d bytes", got.Matched)
	}
}

func TestPrefixEstimator_EstimateDoesNotRemember(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{})
	e.Estimate("m", []byte("abc"))
	if n, b := e.Len(); n != 0 || b != 0 {
		t.Fatalf("Len() = %d, %d after Estimate only", n, b)
	}
}

func TestPrefixEstimator_ExtensionReplacesItsPrefix(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{})
	e.Remember("m", []byte("turn1"))
	e.Remember("m", []byte("turn1turn2"))
	e.Remember("m", []byte("turn1turn2")) // a repeat replaces, too
	if n, b := e.Len(); n != 1 || b != 10 {
		t.Fatalf("Len() = %d prompts, %d bytes; want 1, 10", n, b)
	}
	e.Remember("m", []byte("turn1other")) // diverges: both kept
	if n, b := e.Len(); n != 2 || b != 20 {
		t.Fatalf("Len() = %d prompts, %d bytes; want 2, 20", n, b)
	}
}

func TestPrefixEstimator_PerModelKeepsMostRecent(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{PerModel: 1})
	e.Remember("m", []byte("aaaa"))
	e.Remember("n", []byte("aaaa"))
	e.Remember("m", []byte("bbbb")) // evicts m's "aaaa", not n's
	if got := e.Estimate("m", []byte("aaaa")); got.Matched != 0 {
		t.Errorf("evicted prompt still matched %d bytes", got.Matched)
	}
	if got := e.Estimate("m", []byte("bbbb")); got.Matched != 4 {
		t.Errorf("recent prompt matched %d bytes, want 4", got.Matched)
	}
	if got := e.Estimate("n", []byte("aaaa")); got.Matched != 4 {
		t.Errorf("other model's prompt matched %d bytes, want 4", got.Matched)
	}
}

func TestPrefixEstimator_CapacityEvictsLeastRecent(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{CapacityBytes: 10})
	e.Remember("m", []byte("aaaa"))
	e.Remember("m", []byte("bbbb"))
	e.Remember("m", []byte("cccc")) // 12 bytes > 10: "aaaa" goes
	if n, b := e.Len(); n != 2 || b != 8 {
		t.Fatalf("Len() = %d prompts, %d bytes; want 2, 8", n, b)
	}
	if got := e.Estimate("m", []byte("aaaa")); got.Matched != 0 {
		t.Errorf("evicted prompt matched %d bytes", got.Matched)
	}
	e.Remember("m", []byte("this is longer than ten bytes"))
	if n, b := e.Len(); n != 2 || b != 8 {
		t.Errorf("a prompt over capacity changed the estimator: %d prompts, %d bytes", n, b)
	}
}

func TestPrefixEstimator_CopiesPrompt(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{})
	p := []byte("abcd")
	e.Remember("m", p)
	copy(p, "zzzz")
	if got := e.Estimate("m", []byte("abcd")); got.Matched != 4 {
		t.Errorf("caller's later write changed the remembered prompt: matched %d", got.Matched)
	}
}

func TestPrefixEstimator_ConcurrentUse(t *testing.T) {
	e := NewPrefixEstimator(PrefixOptions{CapacityBytes: 1 << 10, PerModel: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := []byte(fmt.Sprintf("prefix-%d-%d", g, i))
				e.Estimate(fmt.Sprint(g%3), p)
				e.Remember(fmt.Sprint(g%3), p)
			}
		}()
	}
	wg.Wait()
	n, b := e.Len()
	if n > 12 || b > 1<<10 {
		t.Errorf("Len() = %d prompts, %d bytes; want at most 12 and 1024", n, b)
	}
}

func ExamplePrefixEstimator() {
	e := NewPrefixEstimator(PrefixOptions{PerModel: 1})
	e.Remember("qwen", []byte(`{"role":"system","content":"be brief"}{"role":"user","content":"hi"}`))

	next := []byte(`{"role":"system","content":"be brief"}{"role":"user","content":"bye"}`)
	m := e.Estimate("qwen", next)
	fmt.Printf("%d of %d bytes; of 40 prompt tokens, about %d cached\n", m.Matched, m.Total, m.Tokens(40))
	// Output: 64 of 69 bytes; of 40 prompt tokens, about 37 cached
}
