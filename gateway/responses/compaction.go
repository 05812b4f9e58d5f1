package responses

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// A compaction item's encrypted_content is the gateway's own, not OpenAI's ciphertext:
// "mgc1." (the format), the summary in base64url, ".", and the first 8 bytes of the
// SHA-256 of the format and the summary in hex. It is versioned and checked, not secret
// (a client can send any summary as a user message anyway) and not tied to one process
// or key, so a session compacted before a restart, or on another replica, continues.
const compactionFormat = "mgc1."

// CompactionPrompt is the instruction the gateway appends when the client's compact
// request has no instructions of its own.
const CompactionPrompt = "Summarize the conversation so far for your own later use: the task, what has been done, what was decided, files and identifiers that matter, and what remains to do. Write only the summary."

// compactionPrefix starts the user message a compaction item becomes.
const compactionPrefix = "Summary of the conversation so far:\n\n"

// reasoningFormat starts a reasoning item's encrypted_content, sealed as a compaction's
// summary is: the reasoning text, readable back by any gateway, checked, not secret (it
// is the model's own text, which the client could have asked for as content).
const reasoningFormat = "mgr1."

// EncodeCompaction is the encrypted_content that carries summary.
func EncodeCompaction(summary string) string { return seal(compactionFormat, summary) }

// DecodeCompaction reads an encrypted_content that EncodeCompaction wrote; false for any
// other (OpenAI's own ciphertext, another gateway's format, a damaged one).
func DecodeCompaction(s string) (string, bool) { return unseal(compactionFormat, s) }

// EncodeReasoning is the encrypted_content of a reasoning item whose text is text.
func EncodeReasoning(text string) string { return seal(reasoningFormat, text) }

// DecodeReasoning reads an encrypted_content that EncodeReasoning wrote; false for any
// other.
func DecodeReasoning(s string) (string, bool) { return unseal(reasoningFormat, s) }

func seal(format, text string) string {
	return format + base64.RawURLEncoding.EncodeToString([]byte(text)) + "." + sealCheck(format, text)
}

func unseal(format, s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, format)
	if !ok {
		return "", false
	}
	b64, check, ok := strings.Cut(rest, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil || sealCheck(format, string(b)) != check {
		return "", false
	}
	return string(b), true
}

func sealCheck(format, text string) string {
	h := sha256.New()
	h.Write([]byte(format))
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil)[:8])
}
