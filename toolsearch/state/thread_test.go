package state

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestThread_Precedence(t *testing.T) {
	all := ThreadInput{Header: "h", MetadataThreadID: "m", PromptCacheKey: "p", User: "u",
		APIKey: "k", SystemPrompt: "s", FirstUser: "f"}
	tests := []struct {
		name string
		in   ThreadInput
		same ThreadInput // an input that must resolve to the same thread
	}{
		{"header first", all, ThreadInput{Header: "h", APIKey: "k"}},
		{"then metadata.thread_id", ThreadInput{MetadataThreadID: "m", PromptCacheKey: "p", User: "u", APIKey: "k"},
			ThreadInput{MetadataThreadID: "m", APIKey: "k", FirstUser: "other"}},
		{"header and metadata.thread_id are one kind", ThreadInput{Header: "x", APIKey: "k"},
			ThreadInput{MetadataThreadID: "x", APIKey: "k"}},
		{"then prompt_cache_key", ThreadInput{PromptCacheKey: "p", User: "u", APIKey: "k"},
			ThreadInput{PromptCacheKey: "p", APIKey: "k"}},
		{"then user", ThreadInput{User: "u", APIKey: "k", SystemPrompt: "s"},
			ThreadInput{User: "u", APIKey: "k"}},
		{"then the fingerprint", ThreadInput{APIKey: "k", SystemPrompt: "s", FirstUser: "f"},
			ThreadInput{APIKey: "k", SystemPrompt: "s", FirstUser: "f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := Thread(tt.in), Thread(tt.same); got != want {
				t.Errorf("Thread(%+v) = %s, want %s", tt.in, got, want)
			}
		})
	}
}

func TestThread_NeverShared(t *testing.T) {
	distinct := []ThreadInput{
		{Header: "t1", APIKey: "k1"},
		{Header: "t1", APIKey: "k2"}, // same id, other key
		{PromptCacheKey: "t1", APIKey: "k1"},
		{User: "t1", APIKey: "k1"},
		{User: "t1"},
		{APIKey: "k1"}, // anonymous: fingerprints, never one global entry
		{APIKey: "k2"},
		{},
		{FirstUser: "hello"},
		{SystemPrompt: "hello"},
		{APIKey: "k1", FirstUser: "hello"},
		{APIKey: "k1hello"},
		{APIKey: "k1", SystemPrompt: "a", FirstUser: "b"},
		{APIKey: "k1", SystemPrompt: "ab"},
	}
	seen := map[string]int{}
	for i, in := range distinct {
		th := Thread(in)
		if j, dup := seen[th]; dup {
			t.Errorf("inputs %d (%+v) and %d (%+v) share thread %s", j, distinct[j], i, in, th)
		}
		seen[th] = i
		if in.APIKey != "" && strings.Contains(th, in.APIKey) {
			t.Errorf("thread %s shows the API key", th)
		}
	}
}

func TestThread_IdenticalFirstTurnsShareByDesign(t *testing.T) {
	a := ThreadInput{APIKey: "k", SystemPrompt: "You are helpful.", FirstUser: "List my repos"}
	if Thread(a) != Thread(a) {
		t.Error("the fingerprint is not stable")
	}
}

func TestReadThreadInput(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ThreadInput
	}{
		{"all fields", `{"model":"m","user":"u1","prompt_cache_key":"p1","metadata":{"thread_id":"t1","x":"y"},
			"messages":[{"role":"system","content":"sys"},{"role":"user","content":"first"},{"role":"user","content":"second"}]}`,
			ThreadInput{MetadataThreadID: "t1", PromptCacheKey: "p1", User: "u1", SystemPrompt: "sys", FirstUser: "first"}},
		{"text parts, developer role, first of each", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]},
			{"role":"developer","content":[{"type":"text","text":"dev"}]},{"role":"system","content":"late"}]}`,
			ThreadInput{SystemPrompt: "dev", FirstUser: "ab"}},
		{"wrong types read as empty", `{"user":5,"prompt_cache_key":null,"metadata":{"thread_id":7},"messages":[]}`, ThreadInput{}},
		{"metadata not an object", `{"metadata":"t1","messages":[{"role":"user","content":"x"}]}`, ThreadInput{FirstUser: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadThreadInput([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadThreadInput([]byte(`{"messages":`)); err == nil {
		t.Error("no error for a truncated body")
	}
}
