package state

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ThreadInput is what a request says about its conversation. The gateway fills Header
// (X-Thread-Id) and Identity; ReadThreadInput fills the rest from the body.
type ThreadInput struct {
	Header           string // the X-Thread-Id header
	MetadataThreadID string // metadata.thread_id
	PromptCacheKey   string // prompt_cache_key
	User             string // user
	Identity         string // who the caller is, as authenticated (a key's name); "" for anonymous
	SystemPrompt     string // text of the first system (or developer) message
	FirstUser        string // text of the first user message
}

// Threads names the conversation a request belongs to. The zero value is usable but
// unsalted; give it a Secret.
type Threads struct {
	// Secret salts every thread id (HMAC-SHA256), so an id reveals nothing of the
	// identity or the client's own id, and cannot be computed without it.
	Secret []byte
	// Fingerprint files requests that name no thread under their opening messages (see
	// Thread). Off: they have no thread.
	Fingerprint bool
}

// Thread returns the id of in's thread: 32 hex digits, or "" when in names none.
//
// The first non-empty of the X-Thread-Id header, metadata.thread_id, prompt_cache_key and
// user is the thread, within the caller's identity: the same id sent by two identities
// names two threads, and by one identity (clients sharing a key) one. The header and
// metadata.thread_id are one kind (explicit thread ids), while prompt_cache_key and user
// are namespaced by kind too, so a user called "t1" never shares with a thread called
// "t1".
//
// With none of them, and Fingerprint on, the thread is the identity's conversation that
// opened with the same system prompt and first user message: two conversations of one
// identity that open alike share it, by design, since that is what lets a client that
// sends no id resume its conversation (every later request repeats those messages). It
// is never shared across identities. With Fingerprint off such a request has no thread.
func (t Threads) Thread(in ThreadInput) string {
	for _, c := range []struct{ kind, id string }{
		{"thread", in.Header}, {"thread", in.MetadataThreadID},
		{"cache", in.PromptCacheKey}, {"user", in.User},
	} {
		if c.id != "" {
			return t.id(in.Identity, c.kind, c.id)
		}
	}
	if !t.Fingerprint {
		return ""
	}
	return t.id(in.Identity, "anon", in.SystemPrompt, in.FirstUser)
}

// id is the salted hash of parts, each length-prefixed so that no two lists hash alike.
func (t Threads) id(parts ...string) string {
	h := hmac.New(sha256.New, t.Secret)
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Caller is a routing name for identity: stable for one Secret, unguessable without it,
// different from every thread id and cache salt. Routers that keep a caller on one
// engine read it (gateway.HintCaller).
func (t Threads) Caller(identity string) string { return t.id(identity, "caller") }

// CacheSalt is a secret per identity for engines that take a cache salt: stable for one
// Secret, unguessable without it, different for every identity and from every thread id.
func (t Threads) CacheSalt(identity string) string { return t.id(identity, "cache-salt") }

// ReadThreadInput reads metadata.thread_id, prompt_cache_key, user and the first system
// and user messages' text from a chat request body; Header and Identity are left empty.
// Content may be a string or an array of parts (the text parts are joined). A member of
// another type than expected reads as "". It reads body and never changes it.
func ReadThreadInput(body []byte) (ThreadInput, error) {
	var req struct {
		Metadata       json.RawMessage `json:"metadata"`
		PromptCacheKey json.RawMessage `json:"prompt_cache_key"`
		User           json.RawMessage `json:"user"`
		Messages       []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return ThreadInput{}, fmt.Errorf("reading the thread of a chat request: %w", err)
	}
	var in ThreadInput
	var meta struct {
		ThreadID json.RawMessage `json:"thread_id"`
	}
	if json.Unmarshal(req.Metadata, &meta) == nil {
		in.MetadataThreadID = str(meta.ThreadID)
	}
	in.PromptCacheKey = str(req.PromptCacheKey)
	in.User = str(req.User)
	sys, user := false, false
	for _, m := range req.Messages {
		switch {
		case !sys && (m.Role == "system" || m.Role == "developer"):
			in.SystemPrompt, sys = contentText(m.Content), true
		case !user && m.Role == "user":
			in.FirstUser, user = contentText(m.Content), true
		}
		if sys && user {
			break
		}
	}
	return in, nil
}

// ThreadInputOf is ReadThreadInput for a request whose members were already found (by
// the gateway's envelope scan): metadata, prompt_cache_key and user raw (nil when
// absent), and the messages, of which it decodes only as many as it needs to find the
// first system and user message. It never reads the tools, however large.
func ThreadInputOf(metadata, promptCacheKey, user []byte, messages []json.RawMessage) ThreadInput {
	var in ThreadInput
	var meta struct {
		ThreadID json.RawMessage `json:"thread_id"`
	}
	if json.Unmarshal(metadata, &meta) == nil {
		in.MetadataThreadID = str(meta.ThreadID)
	}
	in.PromptCacheKey = str(promptCacheKey)
	in.User = str(user)
	sys, usr := false, false
	for _, raw := range messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		switch {
		case !sys && (m.Role == "system" || m.Role == "developer"):
			in.SystemPrompt, sys = contentText(m.Content), true
		case !usr && m.Role == "user":
			in.FirstUser, usr = contentText(m.Content), true
		}
		if sys && usr {
			break
		}
	}
	return in
}

// str is a JSON string's value, or "" for anything else.
func str(v json.RawMessage) string {
	var s string
	if len(v) == 0 || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}
