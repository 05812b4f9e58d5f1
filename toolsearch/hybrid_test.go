package toolsearch

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// topicEmbedder is a deterministic stand-in for a model: a text's vector counts its words
// in each topic, so texts about one topic are similar without sharing words.
type topicEmbedder struct {
	topics [][]string
	texts  atomic.Int32
	fail   bool
}

func (e *topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.fail {
		return nil, errors.New("model unavailable")
	}
	e.texts.Add(int32(len(texts)))
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, len(e.topics)+1)
		v[len(e.topics)] = 0.1 // no text is orthogonal to everything
		for _, w := range tokenizeText(nil, s) {
			for k, topic := range e.topics {
				if contains(topic, w) {
					v[k]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func newTopics() *topicEmbedder {
	return &topicEmbedder{topics: [][]string{
		{"weather", "forecast", "umbrella", "drizzle", "city"},
		{"email", "send", "recipients", "letter", "correspondence"},
		{"calendar", "event", "events", "attendees", "gathering"},
	}}
}

func TestHybrid_FindsWhatWordsMiss(t *testing.T) {
	ix := NewIndex(corpus(t), Options{})
	h, err := NewHybrid(context.Background(), ix, newTopics(), HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No tool has "umbrella" or "drizzle": lexical search finds nothing, the vectors do.
	if got := ix.Search("need an umbrella for the drizzle", SearchOptions{}); len(got) != 0 {
		t.Fatalf("lexical found %v", names(got))
	}
	got, err := h.Search(context.Background(), "need an umbrella for the drizzle", SearchOptions{})
	if err != nil || len(got) == 0 || got[0].Name != "get_weather" {
		t.Fatalf("hybrid = %v, %v", got, err)
	}
	if want := (1.0 / 61) / (2.0 / 61); got[0].Score != round3(want) {
		t.Errorf("first in one ranking only: score %v, want %v", got[0].Score, round3(want))
	}
	// First in both rankings scores 1.
	got, _ = h.Search(context.Background(), "send an email to recipients", SearchOptions{})
	if len(got) == 0 || got[0].Name != "send_email" || got[0].Score != 1 {
		t.Errorf("hybrid = %v", got)
	}
}

func TestHybrid_RequestToolsEmbeddedOnceAndNotShared(t *testing.T) {
	e := newTopics()
	h, err := NewHybrid(context.Background(), NewIndex(corpus(t), Options{}), e, HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	profileTexts := e.texts.Load()
	req, err := h.WithClient(mustClient(t, `[{"type":"function","function":{"name":"rsvp","description":"Reply to a gathering."}}]`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		got, err := req.Search(context.Background(), "gathering", SearchOptions{})
		if err != nil || len(got) == 0 || got[0].Name != "rsvp" {
			t.Fatalf("request = %v, %v", got, err)
		}
	}
	if n := e.texts.Load() - profileTexts; n != 3+1 {
		t.Errorf("embedded %d texts for 3 searches, want 3 queries + 1 client tool", n)
	}
	got, _ := h.Search(context.Background(), "gathering", SearchOptions{TopK: -1, MinScore: -1})
	if contains(names(got), "rsvp") {
		t.Error("the profile Hybrid sees a client tool")
	}
}

func TestHybrid_ReusesVectorsOfUnchangedTools(t *testing.T) {
	e := newTopics()
	c := corpus(t)
	h1, err := NewHybrid(context.Background(), NewIndex(c, Options{}), e, HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	for _, tool := range c.All() {
		tools = append(tools, *tool)
	}
	tools[0].Description = "Changed."
	c2, _ := New(tools)
	before := e.texts.Load()
	if _, err := NewHybrid(context.Background(), NewIndex(c2, Options{}), e, HybridOptions{Previous: h1}); err != nil {
		t.Fatal(err)
	}
	if n := e.texts.Load() - before; n != 1 {
		t.Errorf("embedded %d tools, want only the changed one", n)
	}
}

func TestHybrid_EmbedderDownFallsBackToLexical(t *testing.T) {
	e := newTopics()
	ix := NewIndex(corpus(t), Options{})
	h, err := NewHybrid(context.Background(), ix, e, HybridOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.fail = true
	got, err := h.Search(context.Background(), "create an issue", SearchOptions{})
	if err == nil || !strings.Contains(err.Error(), "model unavailable") {
		t.Errorf("err = %v", err)
	}
	if want := ix.Search("create an issue", SearchOptions{}); len(got) == 0 || got[0] != want[0] {
		t.Errorf("fallback = %v, want %v", got, want)
	}
	if _, err := NewHybrid(context.Background(), ix, e, HybridOptions{}); err == nil {
		t.Error("NewHybrid with a failing embedder succeeded")
	}
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }
