package oai

import "encoding/json"

// Edit is one change of a top-level member for Object.Edit: Value replaces or adds the
// member Key; Delete removes it.
type Edit struct {
	Key    string
	Value  []byte // raw JSON, trusted to be valid
	Delete bool
}

// Edit returns new bytes with every edit applied in one copy: the same bytes as applying
// them one by one with Set and Delete, without re-scanning the object between them —
// what a 300 KB request with a 500-tool catalog needs. Keys must be distinct. Members no
// edit names keep their bytes; added members go after the last one, in the order of
// edits.
func (o *Object) Edit(edits ...Edit) []byte {
	size := len(o.b)
	for _, e := range edits {
		size += len(e.Key) + len(e.Value) + 4
	}
	out := make([]byte, 0, size)
	var tail []byte
	if len(o.members) == 0 {
		out = append(out, o.b[:o.closing]...)
		tail = o.b[o.closing:]
	} else {
		out = append(out, o.b[:o.members[0].keyStart]...)
		tail = o.b[o.members[len(o.members)-1].valEnd:]
	}
	kept := 0
	var seenBuf [8]bool
	seen := seenBuf[:0] // edits that named a member; callers pass a handful
	if len(edits) > len(seenBuf) {
		seen = make([]bool, 0, len(edits))
	}
	seen = seen[:len(edits)]
	for i, m := range o.members {
		j := -1
		for k := range edits {
			if o.keyIs(m, edits[k].Key) {
				j = k
				break
			}
		}
		if j >= 0 {
			seen[j] = true
			if edits[j].Delete {
				continue
			}
		}
		if kept > 0 {
			out = append(out, o.b[o.members[i-1].valEnd:m.keyStart]...)
		}
		kept++
		if j >= 0 {
			out = append(out, o.b[m.keyStart:m.valStart]...)
			out = append(out, edits[j].Value...)
		} else {
			out = append(out, o.b[m.keyStart:m.valEnd]...)
		}
	}
	for j, e := range edits {
		if e.Delete || seen[j] {
			continue
		}
		if kept > 0 {
			out = append(out, ',')
		}
		kept++
		quoted, _ := json.Marshal(e.Key)
		out = append(out, quoted...)
		out = append(out, ':')
		out = append(out, e.Value...)
	}
	return append(out, tail...)
}
