package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testThreads = Threads{Secret: []byte("test secret"), Fingerprint: true}

func TestThread_Precedence(t *testing.T) {
	all := ThreadInput{Header: "h", MetadataThreadID: "m", PromptCacheKey: "p", User: "u",
		Identity: "k", SystemPrompt: "s", FirstUser: "f"}
	tests := []struct {
		name string
		in   ThreadInput
		same ThreadInput // an input that must resolve to the same thread
	}{
		{"header first", all, ThreadInput{Header: "h", Identity: "k"}},
		{"then metadata.thread_id", ThreadInput{MetadataThreadID: "m", PromptCacheKey: "p", User: "u", Identity: "k"},
			ThreadInput{MetadataThreadID: "m", Identity: "k", FirstUser: "other"}},
		{"header and metadata.thread_id are one kind", ThreadInput{Header: "x", Identity: "k"},
			ThreadInput{MetadataThreadID: "x", Identity: "k"}},
		{"then prompt_cache_key", ThreadInput{PromptCacheKey: "p", User: "u", Identity: "k"},
			ThreadInput{PromptCacheKey: "p", Identity: "k"}},
		{"then user", ThreadInput{User: "u", Identity: "k", SystemPrompt: "s"},
			ThreadInput{User: "u", Identity: "k"}},
		{"then the fingerprint", ThreadInput{Identity: "k", SystemPrompt: "s", FirstUser: "f"},
			ThreadInput{Identity: "k", SystemPrompt: "s", FirstUser: "f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := testThreads.Thread(tt.in), testThreads.Thread(tt.same); got != want {
				t.Errorf("Thread(%+v) = %s, want %s", tt.in, got, want)
			}
		})
	}
}

func TestThread_NeverSharedAcrossIdentitiesOrKinds(t *testing.T) {
	distinct := []ThreadInput{
		{Header: "t1", Identity: "k1"},
		{Header: "t1", Identity: "k2"}, // same id, other identity
		{Header: "t1"},                 // anonymous
		{PromptCacheKey: "t1", Identity: "k1"},
		{User: "t1", Identity: "k1"},
		{User: "t1"},
		{Identity: "k1"}, // fingerprints, never one global entry
		{Identity: "k2"},
		{},
		{FirstUser: "hello"},
		{SystemPrompt: "hello"},
		{Identity: "k1", FirstUser: "hello"},
		{Identity: "k2", FirstUser: "hello"}, // same opening, other identity
		{Identity: "k1hello"},
		{Identity: "k1", SystemPrompt: "a", FirstUser: "b"},
		{Identity: "k1", SystemPrompt: "ab"},
	}
	seen := map[string]int{}
	for i, in := range distinct {
		th := testThreads.Thread(in)
		if j, dup := seen[th]; dup {
			t.Errorf("inputs %d (%+v) and %d (%+v) share thread %s", j, distinct[j], i, in, th)
		}
		seen[th] = i
	}
}

func TestThread_IdsAreSaltedAndShowNothing(t *testing.T) {
	in := ThreadInput{Header: "t1", Identity: "alice"}
	a := Threads{Secret: []byte("one")}.Thread(in)
	b := Threads{Secret: []byte("two")}.Thread(in)
	if a == b {
		t.Errorf("two secrets give one id %s", a)
	}
	if a != (Threads{Secret: []byte("one")}).Thread(in) {
		t.Error("one secret gives two ids")
	}
	if len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("id %q is not 32 hex digits", a)
	}
	for _, leak := range []string{"t1", "alice", hex.EncodeToString(sha256.New().Sum(nil))[:32]} {
		if strings.Contains(a, leak) {
			t.Errorf("id %s shows %q", a, leak)
		}
	}
	if salt := testThreads.CacheSalt("alice"); salt == testThreads.CacheSalt("bob") || salt == testThreads.Thread(ThreadInput{Identity: "alice"}) {
		t.Errorf("cache salt %s is shared", salt)
	}
}

func TestThread_NoIdAndNoFingerprintIsNoThread(t *testing.T) {
	off := Threads{Secret: []byte("s")}
	if th := off.Thread(ThreadInput{Identity: "k", SystemPrompt: "s", FirstUser: "f"}); th != "" {
		t.Errorf("thread %q for a request that names none, fingerprinting off", th)
	}
	if th := off.Thread(ThreadInput{Identity: "k", User: "u"}); th == "" {
		t.Error("user names a thread even with fingerprinting off")
	}
}

func TestThread_IdenticalFirstTurnsShareWithinAnIdentityByDesign(t *testing.T) {
	a := ThreadInput{Identity: "k", SystemPrompt: "You are helpful.", FirstUser: "List my repos"}
	if testThreads.Thread(a) != testThreads.Thread(a) {
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
			// The gateway's form, from the members its envelope scan found, agrees.
			var parts struct {
				Metadata, PromptCacheKey, User json.RawMessage
				Messages                       []json.RawMessage
			}
			var raw map[string]json.RawMessage
			json.Unmarshal([]byte(tt.body), &raw)
			json.Unmarshal(raw["messages"], &parts.Messages)
			of := ThreadInputOf(raw["metadata"], raw["prompt_cache_key"], raw["user"], parts.Messages)
			if diff := cmp.Diff(tt.want, of); diff != "" {
				t.Errorf("ThreadInputOf (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadThreadInput([]byte(`{"messages":`)); err == nil {
		t.Error("no error for a truncated body")
	}
}
