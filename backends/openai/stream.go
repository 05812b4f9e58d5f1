package openai

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/maskgate/maskgate/backends"
)

// Stream maps the wire names in s's chunks back to real names. OpenAI sends a call's
// whole name in the first delta of that call, so chunks normally pass one for one. A
// name that arrives in pieces is held back — that chunk and the ones after it, in
// order — until it is whole: it matches a mapped wire name that no longer one starts
// with, the call's arguments begin, the choice's finish_reason arrives, or the stream
// ends (another call starting settles nothing: calls may interleave). Then the first
// piece carries the whole real name and the later pieces lose their "name" member. A
// name that cannot become a mapped one is never held. A nil *Names returns s itself.
func (n *Names) Stream(s backends.Stream) backends.Stream {
	if n == nil {
		return s
	}
	return &nameStream{in: s, names: n, calls: map[callKey]*call{}}
}

type callKey struct{ choice, call int }

// call is what the stream knows of one tool call's name.
type call struct {
	got     string // the wire name's pieces so far
	done    bool   // the name is whole
	mapped  bool   // and it maps to a different real name
	real    string
	rewrote bool // the real name has been written into a piece
}

type nameStream struct {
	in    backends.Stream
	names *Names
	calls map[callKey]*call
	held  [][]byte // chunks waiting for a name to be whole
	ready [][]byte // chunks to hand out, in order
	err   error    // the inner stream's end, once reached
}

// chunkCalls is what the stream reads of a chunk to follow names.
type chunkCalls struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			ToolCalls []struct {
				Index    *int `json:"index"`
				Function struct {
					Name      *string `json:"name"`
					Arguments string  `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

func (s *nameStream) Next() ([]byte, error) {
	for len(s.ready) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		chunk, err := s.in.Next()
		if err != nil {
			// A name still in pieces is as whole as it will get.
			s.settleAll()
			s.err = err
			if rerr := s.release(); rerr != nil {
				s.err = rerr
			}
			continue
		}
		if len(s.held) == 0 && !bytes.Contains(chunk, []byte(`"tool_calls"`)) {
			return chunk, nil // the common case: nothing to follow
		}
		// The inner stream may reuse chunk's memory on its next call.
		s.held = append(s.held, bytes.Clone(chunk))
		s.follow(chunk)
		if s.pending() {
			continue
		}
		if err := s.release(); err != nil {
			s.err = err
		}
	}
	c := s.ready[0]
	s.ready = s.ready[1:]
	return c, nil
}

// follow updates the calls' names from one chunk.
func (s *nameStream) follow(chunk []byte) {
	var c chunkCalls
	if json.Unmarshal(chunk, &c) != nil {
		return // not ours to judge; the gateway reads it next
	}
	for _, ch := range c.Choices {
		for i, tc := range ch.Delta.ToolCalls {
			k := callKey{ch.Index, i}
			if tc.Index != nil {
				k.call = *tc.Index
			}
			cl := s.calls[k]
			if cl == nil {
				cl = &call{}
				s.calls[k] = cl
			}
			if tc.Function.Name != nil && !cl.done {
				cl.got += *tc.Function.Name
				switch prefix, final := s.names.mayBecome(cl.got); {
				case !prefix:
					cl.done = true // passes as it is
				case final:
					s.settleCall(cl)
				}
			}
			if tc.Function.Arguments != "" && !cl.done {
				s.settleCall(cl)
			}
		}
		if ch.FinishReason != nil {
			s.settle(func(o callKey) bool { return o.choice == ch.Index })
		}
	}
}

func (s *nameStream) settleCall(cl *call) {
	if cl.done {
		return
	}
	cl.done = true
	cl.real = s.names.Real(cl.got)
	cl.mapped = cl.real != cl.got
}

func (s *nameStream) settle(which func(callKey) bool) {
	for k, cl := range s.calls {
		if which(k) {
			s.settleCall(cl)
		}
	}
}

func (s *nameStream) settleAll() { s.settle(func(callKey) bool { return true }) }

func (s *nameStream) pending() bool {
	for _, cl := range s.calls {
		if !cl.done {
			return true
		}
	}
	return false
}

// release rewrites the held chunks with the settled names and queues them.
func (s *nameStream) release() error {
	for _, chunk := range s.held {
		out, err := s.rewriteChunk(chunk)
		if err != nil {
			return err
		}
		s.ready = append(s.ready, out)
	}
	s.held = s.held[:0]
	return nil
}

var errChunk = errors.New("openai: cannot map the tool names of a stream chunk")

func (s *nameStream) rewriteChunk(chunk []byte) ([]byte, error) {
	var c chunkCalls
	if json.Unmarshal(chunk, &c) != nil {
		return chunk, nil
	}
	out, _, err := rewrite(chunk, chunkPath, func(pos []int, name string) (string, op) {
		if len(pos) != 2 || pos[0] >= len(c.Choices) || pos[1] >= len(c.Choices[pos[0]].Delta.ToolCalls) {
			return "", keep
		}
		ch := c.Choices[pos[0]]
		k := callKey{ch.Index, pos[1]}
		if idx := ch.Delta.ToolCalls[pos[1]].Index; idx != nil {
			k.call = *idx
		}
		cl := s.calls[k]
		if cl == nil || !cl.mapped {
			return "", keep
		}
		if cl.rewrote {
			return "", drop // the first piece already carries the whole name
		}
		cl.rewrote = true
		return cl.real, replace
	})
	if err != nil {
		return nil, errors.Join(errChunk, err)
	}
	return out, nil
}

func (s *nameStream) Close() error { return s.in.Close() }

var _ backends.Stream = (*nameStream)(nil)
