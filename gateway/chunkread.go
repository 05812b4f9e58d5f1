package gateway

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
)

// decodeChunk reads a chat.completion.chunk into c exactly as json.Unmarshal would. The
// chunks that carry text — at most one choice, whose delta holds a role, content or
// reasoning in plain ASCII without escapes — are read off the scanner's index of the
// object, without reflection: a managed stream reads every chunk, and encoding/json was
// a quarter of its CPU. Anything else (tool calls, escapes, non-ASCII text, keys spelt
// in another case, repeated or unknown members) goes to json.Unmarshal, which defines
// the result; a differential fuzz test holds the two equal.
func decodeChunk(data []byte, c *oai.Chunk) error {
	if fastChunk(data, c) {
		return nil
	}
	*c = oai.Chunk{}
	return json.Unmarshal(data, c)
}

// fastChunk is decodeChunk's fast path; false leaves c to be decoded in full.
func fastChunk(data []byte, c *oai.Chunk) bool {
	o, err := oai.ParseObject(data)
	if err != nil {
		return false
	}
	*c = oai.Chunk{}
	seen, ok := 0, true
	o.Each(func(key, v []byte) bool {
		bit := 0
		switch string(key) {
		case "id":
			bit = 1
			c.ID, ok = plainString(v)
		case "object":
			bit = 2
			c.Object, ok = plainString(v)
		case "model":
			bit = 4
			c.Model, ok = plainString(v)
		case "created":
			bit = 8
			c.Created, err = strconv.ParseInt(string(v), 10, 64)
			ok = err == nil
		case "system_fingerprint":
			bit = 16
			c.SystemFingerprint, ok = plainString(v)
		case "choices":
			bit = 32
			ok = fastChoices(v, c)
		case "usage":
			bit = 64
			if string(v) != "null" {
				c.Usage = new(oai.Usage)
				ok = json.Unmarshal(v, c.Usage) == nil
			}
		}
		if bit == 0 || seen&bit != 0 {
			ok = false
		}
		seen |= bit
		return ok
	})
	return ok
}

var errTwoChoices = errors.New("more than one choice")

// fastChoices reads a choices array of none or one choice.
func fastChoices(v []byte, c *oai.Chunk) bool {
	c.Choices = []oai.ChunkChoice{}
	var elem []byte
	if oai.Elements(v, func(e []byte) error {
		if elem != nil {
			return errTwoChoices
		}
		elem = e
		return nil
	}) != nil {
		return false
	}
	if elem == nil {
		return true
	}
	ch, err := oai.ParseObject(elem)
	if err != nil {
		return false
	}
	var out oai.ChunkChoice
	seen, ok := 0, true
	ch.Each(func(key, v []byte) bool {
		bit := 0
		switch string(key) {
		case "index":
			bit = 1
			n, err := strconv.Atoi(string(v))
			out.Index, ok = n, err == nil
		case "finish_reason":
			bit = 2
			if string(v) != "null" {
				s, good := plainString(v)
				out.FinishReason, ok = &s, good
			}
		case "logprobs":
			bit = 4
			ok = string(v) == "null"
		case "delta":
			bit = 8
			ok = fastDelta(v, &out.Delta)
		}
		if bit == 0 || seen&bit != 0 {
			ok = false
		}
		seen |= bit
		return ok
	})
	c.Choices = append(c.Choices, out)
	return ok
}

func fastDelta(v []byte, d *oai.Delta) bool {
	o, err := oai.ParseObject(v)
	if err != nil {
		return false
	}
	seen, ok := 0, true
	o.Each(func(key, v []byte) bool {
		bit := 0
		var dst **string
		switch string(key) {
		case "role":
			bit = 1
			d.Role, ok = plainString(v)
		case "content":
			bit, dst = 2, &d.Content
		case "reasoning_content":
			bit, dst = 4, &d.ReasoningContent
		case "reasoning":
			bit, dst = 8, &d.Reasoning
		}
		if dst != nil && string(v) != "null" { // null leaves the pointer nil, as json does
			var s string
			s, ok = plainString(v)
			*dst = &s
		}
		if bit == 0 || seen&bit != 0 {
			ok = false
		}
		seen |= bit
		return ok
	})
	return ok
}

// plainString is the text of a JSON string with no escapes and no bytes outside
// printable ASCII, which is its bytes; false for anything else, null included.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	for _, b := range v[1 : len(v)-1] {
		if b == '\\' || b >= 0x80 || b < 0x20 {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}
