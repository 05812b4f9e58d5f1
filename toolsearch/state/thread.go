package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ThreadInput is what a request says about its conversation. The gateway fills Header
// (X-Thread-Id) and APIKey; ReadThreadInput fills the rest from the body.
type ThreadInput struct {
	Header           string // the X-Thread-Id header
	MetadataThreadID string // metadata.thread_id
	PromptCacheKey   string // prompt_cache_key
	User             string // user
	APIKey           string // the client's key; "" for none
	SystemPrompt     string // text of the first system (or developer) message
	FirstUser        string // text of the first user message
}

// Thread names the conversation a request belongs to.
//
// The first non-empty of the X-Thread-Id header, metadata.thread_id, prompt_cache_key and
// user is the thread, namespaced by the API key: the same id sent with two keys names two
// threads. The header and metadata.thread_id are one kind (explicit thread ids), while
// prompt_cache_key and user are namespaced by kind too, so a user called "t1" never
// shares with a thread called "t1".
//
// With none of them, the thread is a fingerprint: the SHA-256 of (API key, system prompt,
// first user message). Anonymous requests therefore never share one global entry. Two
// conversations from one key that open with identical system and user messages do share
// a thread, by design: that is what lets a client that sends no id resume its
// conversation, since every later request repeats those opening messages.
//
// The result holds no secret: the key appears only as a hash.
func Thread(in ThreadInput) string {
	key := digest(in.APIKey)
	for _, c := range []struct{ kind, id string }{
		{"thread", in.Header}, {"thread", in.MetadataThreadID},
		{"cache", in.PromptCacheKey}, {"user", in.User},
	} {
		if c.id != "" {
			return fmt.Sprintf("%s/%s:%s", key[:32], c.kind, c.id)
		}
	}
	return fmt.Sprintf("%s/anon:%s", key[:32], digest(in.APIKey, in.SystemPrompt, in.FirstUser))
}

// digest hashes parts, each length-prefixed so that no two lists hash alike.
func digest(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ReadThreadInput reads metadata.thread_id, prompt_cache_key, user and the first system
// and user messages' text from a chat request body; Header and APIKey are left empty.
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

// str is a JSON string's value, or "" for anything else.
func str(v json.RawMessage) string {
	var s string
	if len(v) == 0 || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}
