package tokens

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
)

func newCounter(t testing.TB, o Options) *Counter {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCount_O200kBase(t *testing.T) {
	c := newCounter(t, Options{})
	for text, want := range map[string]int{
		"":            0,
		"hello world": 2,
		"a":           1,
	} {
		if got := c.Count([]byte(text)); got != want {
			t.Errorf("Count(%q) = %d, want %d", text, got, want)
		}
	}
	if n := c.Count([]byte("\xff\xfe invalid utf-8")); n <= 0 {
		t.Errorf("invalid UTF-8 counted as %d tokens", n)
	}
}

func TestToolTokens_IsCountOfTheRenderedTool(t *testing.T) {
	c := newCounter(t, Options{})
	cat := catalog(t, 1)
	one := cat.AppendNames(nil, []string{cat.Tool(0).Name})
	tool := one[1 : len(one)-1] // the tool object without the array brackets
	if got, want := c.ToolTokens(tool), c.Count(tool); got != want || got == 0 {
		t.Errorf("ToolTokens = %d, Count = %d", got, want)
	}
}

func TestCatalogTokens_CachedByVersion(t *testing.T) {
	c := newCounter(t, Options{})
	cat := catalog(t, 20)
	n := c.CatalogTokens(cat.Render())
	if want := c.Count(cat.Render()); n != want {
		t.Fatalf("CatalogTokens = %d, Count = %d", n, want)
	}
	// The key is the catalog's version, so holders of a Catalog hit without rendering.
	got := c.VersionTokens(cat.Version(), func() []byte { t.Fatal("rendered on a cache hit"); return nil })
	if got != n || c.cached() != 1 {
		t.Errorf("VersionTokens = %d (cached %d), want %d from the cache", got, c.cached(), n)
	}
}

func TestCatalogTokens_ConcurrentMissesCountOnce(t *testing.T) {
	c := newCounter(t, Options{})
	cat := catalog(t, 50)
	var renders atomic.Int32
	var wg sync.WaitGroup
	counts := make([]int, 16)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i] = c.VersionTokens(cat.Version(), func() []byte { renders.Add(1); return cat.Render() })
		}()
	}
	wg.Wait()
	if renders.Load() != 1 {
		t.Errorf("rendered %d times, want once", renders.Load())
	}
	for _, n := range counts[1:] {
		if n != counts[0] {
			t.Fatalf("counts differ: %v", counts)
		}
	}
}

func TestCatalogTokens_BoundedOldestForgotten(t *testing.T) {
	c := newCounter(t, Options{CacheSize: 2})
	calls := map[string]int{}
	count := func(v string) {
		c.VersionTokens(v, func() []byte { calls[v]++; return []byte(v) })
	}
	for _, v := range []string{"a", "b", "a", "c", "b", "a"} {
		count(v)
	}
	// a, b cached; c evicts a; b hits; a misses again (evicting b).
	if want := map[string]int{"a": 2, "b": 1, "c": 1}; fmt.Sprint(calls) != fmt.Sprint(want) || c.cached() != 2 {
		t.Errorf("renders %v, cached %d; want %v, 2", calls, c.cached(), want)
	}
}

func TestCheck_Budget(t *testing.T) {
	cases := []struct {
		name                string
		prompt, max, window int
		param               string
		over                int
		mentions            []string
	}{
		{"unknown window refuses nothing", 1 << 30, 1 << 20, 0, "", 0, nil},
		{"fits", 1000, 500, 2000, "", 0, nil},
		{"fits exactly", 1500, 500, 2000, "", 0, nil},
		{"no max_tokens needs one token of room", 1999, 0, 2000, "", 0, nil},
		{"prompt fills the window", 2000, 0, 2000, "messages", 1, []string{"2000 tokens", "at least 1 token "}},
		{"prompt overflows", 80000, 1000, 32768, "messages", 47233, []string{"about 80000", "32768", "47233"}},
		{"max_tokens overflows", 30000, 4096, 32768, "max_tokens", 1328, []string{"1328 tokens over", "at most 2768"}},
	}
	for _, c := range cases {
		err := Check(c.prompt, c.max, c.window)
		if c.param == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var be *BudgetError
		if !errors.As(err, &be) {
			t.Errorf("%s: error %v is not a *BudgetError", c.name, err)
			continue
		}
		if be.Param != c.param || be.Over != c.over || be.Code != "context_length_exceeded" {
			t.Errorf("%s: param %q over %d code %q, want %q %d", c.name, be.Param, be.Over, be.Code, c.param, c.over)
		}
		for _, m := range c.mentions {
			if !strings.Contains(be.Message, m) {
				t.Errorf("%s: message %q lacks %q", c.name, be.Message, m)
			}
		}
	}
}

// catalog is n synthetic tools shaped like MCP servers' (about 150 tokens each).
func catalog(t testing.TB, n int) *toolsearch.Catalog {
	t.Helper()
	products := []string{"github", "slack", "gmail", "calendar", "drive", "postgres", "s3", "linear", "jira", "notion"}
	verbs := []string{"create", "list", "get", "update", "delete", "search", "archive", "share"}
	tools := make([]toolsearch.Tool, n)
	for i := range tools {
		p, v := products[i%len(products)], verbs[(i/len(products))%len(verbs)]
		obj := fmt.Sprintf("item%d", i)
		tools[i] = toolsearch.Tool{
			Name: fmt.Sprintf("%s_%s_%s", p, v, obj),
			Description: fmt.Sprintf("%s a %s %s. Use it when the user asks to %s %s records; returns the %s as JSON with its id, owner, timestamps and status. Requires %s credentials with the right scope.",
				strings.ToUpper(v[:1])+v[1:], p, obj, v, p, obj, p),
			Parameters: []byte(fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The %s id, e.g. %s-%04d."},`+
				`"owner":{"type":"string","description":"Account that owns the %s."},"limit":{"type":"integer","minimum":1,"maximum":100,"description":"Most results to return."},`+
				`"status":{"type":"string","enum":["open","closed","draft"]}},"required":["id"]}`, obj, p, i, p)),
		}
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
