package toolsearch

import (
	"math/rand"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The index is golden like the render: it is the prefix of every prompt under index.
func TestIndexText_Golden(t *testing.T) {
	text, _ := corpus(t).IndexText(true)
	golden(t, "index.golden.txt", []byte(text))
}

// The same tools give the same index however they were listed, on any goroutine.
func TestIndexText_ByteIdenticalAcrossOrderAndGoroutines(t *testing.T) {
	tools, err := ReadFiles("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	want, wantID := corpus(t).IndexText(true)
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			shuffled := append([]Tool(nil), tools...)
			rand.New(rand.NewSource(seed)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			c, err := New(shuffled)
			if err != nil {
				errs <- err.Error()
				return
			}
			if got, id := c.IndexText(true); got != want || id != wantID {
				errs <- "index differs:\n" + got
			}
		}(int64(g))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestIndexText_GroupsByNamespaceAndLeavesTheClientsOut(t *testing.T) {
	base, err := New([]Tool{
		{Name: "git_commit", Description: "Record changes. Takes a message."},
		{Name: "git_push", Description: "Push commits\nto a remote."},
		{Name: "weather", Description: ""},
		{Name: "jira_create_issue", Description: "Create an issue.", Summary: "File a Jira ticket"},
		{Name: "jira_search", Description: "Search issues with JQL."},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := base.WithClient([]Tool{{Name: "client_local_tool", Description: "The client's own.", Source: FromClient}})
	if err != nil {
		t.Fatal(err)
	}
	want := "## git\n- git_commit: Record changes.\n- git_push: Push commits\n\n## jira\n- jira_create_issue: File a Jira ticket\n- jira_search: Search issues with JQL.\n\n## other\n- weather\n"
	if got, _ := req.IndexText(false); got != want {
		t.Errorf("index without the client's tools:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := req.IndexText(true); !strings.Contains(got, "- client_local_tool: The client's own.\n") {
		t.Errorf("index with the client's tools lacks theirs:\n%s", got)
	}
}

func TestSummary_FirstSentenceBounded(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Send a message. Use it for chat.", "Send a message."},
		{"  Lists   files\tin a directory", "Lists files in a directory"},
		{"First line\nsecond line. More.", "First line"},
		{"ファイルを読む。次の文。", "ファイルを読む。"},
		{"Version 1.2 of the tool, no sentence end", "Version 1.2 of the tool, no sentence end"},
		{"", ""},
	} {
		if got := Summary(c.in); got != c.want {
			t.Errorf("Summary(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("word ", 60)
	got := Summary(long)
	if len(got) > MaxSummaryBytes || !strings.HasSuffix(got, "word…") {
		t.Errorf("a long description's summary is %d bytes: %q", len(got), got)
	}
	cjk := strings.Repeat("長", 200)
	if got := Summary(cjk); len(got) > MaxSummaryBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("a long CJK description's summary %q is cut inside a character or too long", got)
	}
}

func FuzzSummary(f *testing.F) {
	for _, s := range []string{"Send it. Now.", "a\nb", strings.Repeat("é", 100), "。。。", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Summary(s)
		if len(got) > MaxSummaryBytes {
			t.Fatalf("%d bytes", len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid input: %q", got)
		}
		if strings.ContainsAny(got, "\r\n") {
			t.Fatalf("a summary spans lines: %q", got)
		}
	})
}
