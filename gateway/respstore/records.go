package respstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/maskgate/maskgate/gateway/store"
)

const (
	// recordDepth bounds a stored chain: a response that would be the 33rd record of
	// its chain is stored whole, as the first of a new one (its Parent empty), so that
	// reading a response reads at most 32 records.
	recordDepth = 32
	// recordTimeout bounds each call to the records, whatever the request's context.
	recordTimeout = 2 * time.Second
	// recordFormat is the first byte of a record's data.
	recordFormat = 1
)

// records keeps stored responses as store.Records: each response is a record
// whose parent is the response it continued, holding what the response added to its
// chain, so a chain of n turns stores each message once, not n times.
//
// A record's data is the format byte (1), then as length-prefixed strings (a uvarint
// length, then the bytes): the response object, the thread; then the number of history
// messages before this record's (a uvarint), the number of its own, and each message;
// then the same for the loaded tool definitions; then, when the response kept its
// input items, their number and each (this response's own; a record without them, as
// earlier gateways wrote, has none). Messages are the client's and the
// engine's JSON bytes unchanged. A response's history is its chain's messages, oldest
// record first; the counts let load check that each record continues the one before.
type records struct {
	rec     store.Records
	ttl     time.Duration
	timeout time.Duration
}

// recordParts is one record's data, decoded; its slices share the data's bytes.
type recordParts struct {
	body, thread         []byte
	histBase, loadedBase int
	hist, loaded, input  []json.RawMessage
}

func encodeRecord(r *Response, histBase, loadedBase int) []byte {
	n := 1 + 4*binary.MaxVarintLen64 + len(r.body) + len(r.thread)
	for _, m := range r.history[histBase:] {
		n += binary.MaxVarintLen64 + len(m)
	}
	for _, m := range r.loaded[loadedBase:] {
		n += binary.MaxVarintLen64 + len(m)
	}
	for _, m := range r.input {
		n += binary.MaxVarintLen64 + len(m)
	}
	b := make([]byte, 1, n)
	b[0] = recordFormat
	b = binary.AppendUvarint(b, uint64(len(r.body)))
	b = append(b, r.body...)
	b = binary.AppendUvarint(b, uint64(len(r.thread)))
	b = append(b, r.thread...)
	for _, part := range []struct {
		base int
		all  []json.RawMessage
	}{{histBase, r.history}, {loadedBase, r.loaded}} {
		b = binary.AppendUvarint(b, uint64(part.base))
		b = binary.AppendUvarint(b, uint64(len(part.all)-part.base))
		for _, m := range part.all[part.base:] {
			b = binary.AppendUvarint(b, uint64(len(m)))
			b = append(b, m...)
		}
	}
	if len(r.input) > 0 {
		b = binary.AppendUvarint(b, uint64(len(r.input)))
		for _, m := range r.input {
			b = binary.AppendUvarint(b, uint64(len(m)))
			b = append(b, m...)
		}
	}
	return b
}

var errRecordFormat = errors.New("a stored response's record is not in a format this gateway reads")

// decodeRecord reads a record's data; with whole unset it stops after the body and
// thread.
func decodeRecord(b []byte, whole bool) (recordParts, error) {
	var p recordParts
	if len(b) == 0 || b[0] != recordFormat {
		return p, errRecordFormat
	}
	b = b[1:]
	ok := true
	num := func() int {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<31 {
			ok = false
			return 0
		}
		b = b[n:]
		return int(v)
	}
	str := func() []byte {
		l := num()
		if !ok || l > len(b) {
			ok = false
			return nil
		}
		v := b[:l:l]
		b = b[l:]
		return v
	}
	msgs := func() []json.RawMessage {
		n := num()
		if !ok || n > len(b) { // each takes a byte at least
			ok = false
			return nil
		}
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = str()
		}
		return out
	}
	p.body, p.thread = str(), str()
	if whole && ok {
		p.histBase, p.hist = num(), msgs()
		p.loadedBase, p.loaded = num(), msgs()
		if ok && len(b) > 0 {
			// Written only when there are some: a count of none is damage.
			p.input = msgs()
			ok = ok && len(p.input) > 0
		}
		ok = ok && len(b) == 0
	}
	if !ok {
		return recordParts{}, errRecordFormat
	}
	return p, nil
}

func (k *records) Load(ctx context.Context, owner, id string) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	chain, err := k.rec.Chain(ctx, owner, id, recordDepth)
	if err != nil || len(chain) == 0 || chain[0].Parent != "" {
		return nil, err // an incomplete chain cannot be continued: as absent
	}
	parts := make([]recordParts, len(chain))
	nh, nl := 0, 0
	for i, c := range chain {
		p, err := decodeRecord(c.Data, true)
		if err != nil || p.histBase != nh || p.loadedBase != nl {
			return nil, nil // not a chain this gateway wrote: as absent
		}
		parts[i] = p
		nh, nl = nh+len(p.hist), nl+len(p.loaded)
	}
	hist := make([]json.RawMessage, 0, nh)
	var loaded []json.RawMessage
	if nl > 0 {
		loaded = make([]json.RawMessage, 0, nl)
	}
	for _, p := range parts {
		hist, loaded = append(hist, p.hist...), append(loaded, p.loaded...)
	}
	last := parts[len(parts)-1]
	r := &Response{id: id, owner: owner, body: last.body, history: hist, thread: string(last.thread), loaded: loaded}
	r.depth.Store(int32(len(chain)))
	return r, nil
}

func (k *records) Input(ctx context.Context, owner, id string) ([]json.RawMessage, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	chain, err := k.rec.Chain(ctx, owner, id, 1)
	if err != nil || len(chain) == 0 {
		return nil, false, err
	}
	p, err := decodeRecord(chain[0].Data, true)
	if err != nil {
		return nil, false, nil
	}
	return p.input, true, nil
}

func (k *records) Body(ctx context.Context, owner, id string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	chain, err := k.rec.Chain(ctx, owner, id, 1)
	if err != nil || len(chain) == 0 {
		return nil, false, err
	}
	p, err := decodeRecord(chain[0].Data, false)
	if err != nil {
		return nil, false, nil
	}
	return p.body, true, nil
}

// Save writes r as what it adds to prev's chain when it can: prev is stored, of the
// same owner, its chain not at recordDepth yet, and r's history and loaded tools start
// with prev's. Otherwise, or if the store has lost prev meanwhile, r is written whole.
func (k *records) Save(ctx context.Context, r, prev *Response) error {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	if prev != nil && prev.owner == r.owner {
		if d := prev.depth.Load(); d > 0 && d < recordDepth && extends(r.history, prev.history) && extends(r.loaded, prev.loaded) {
			data := encodeRecord(r, len(prev.history), len(prev.loaded))
			err := k.rec.Put(ctx, r.owner, r.id, store.Record{Parent: prev.id, Data: data}, k.ttl)
			if err == nil {
				r.depth.Store(d + 1)
				return nil
			}
			if !errors.Is(err, store.ErrNoParent) && !errors.Is(err, store.ErrTooLarge) {
				return err
			}
		}
	}
	if err := k.rec.Put(ctx, r.owner, r.id, store.Record{Data: encodeRecord(r, 0, 0)}, k.ttl); err != nil {
		return err
	}
	r.depth.Store(1)
	return nil
}

// extends reports whether all starts with start: the same messages, which the door's
// appends share (so comparing where they start mostly settles it).
func extends(all, start []json.RawMessage) bool {
	if len(all) < len(start) {
		return false
	}
	for i, m := range start {
		a := all[i]
		if len(a) != len(m) || len(m) > 0 && &a[0] != &m[0] && !bytes.Equal(a, m) {
			return false
		}
	}
	return true
}

func (k *records) Drop(ctx context.Context, owner, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	return k.rec.Delete(ctx, owner, id)
}
