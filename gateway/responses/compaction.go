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

// EncodeCompaction is the encrypted_content that carries summary.
func EncodeCompaction(summary string) string {
	return compactionFormat + base64.RawURLEncoding.EncodeToString([]byte(summary)) + "." + compactionCheck(summary)
}

// DecodeCompaction reads an encrypted_content that EncodeCompaction wrote; false for any
// other (OpenAI's own ciphertext, another gateway's format, a damaged one).
func DecodeCompaction(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, compactionFormat)
	if !ok {
		return "", false
	}
	b64, check, ok := strings.Cut(rest, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil || compactionCheck(string(b)) != check {
		return "", false
	}
	return string(b), true
}

func compactionCheck(summary string) string {
	h := sha256.New()
	h.Write([]byte(compactionFormat))
	h.Write([]byte(summary))
	return hex.EncodeToString(h.Sum(nil)[:8])
}
