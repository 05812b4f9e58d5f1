package main

import (
	"sync"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/gateway/planner"
)

// request is what the replay's engines read of a request body the gateway sent.
type request struct {
	obj *oai.Object
	// messages, tools and toolChoice are the members' raw values (empty if absent).
	messages, tools, toolChoice []byte
	// names are the tools' function names (workload.ToolNames).
	names []string
	seen  *workload.Seen
}

// model is what the scripted model reads of the request.
func (r *request) model() workload.Request {
	return workload.Request{Messages: r.messages, Tools: r.names, ToolChoice: r.toolChoice, Seen: r.seen}
}

// bodyReader reads the gateway's request bodies. Under mask, allowed_tools and validate
// every round of a run carries the same tools array, the whole catalog (300 KB at 500
// tools) byte for byte: the reader checks it by comparing bytes with the copy it
// validated (planner.KnownTools, as the gateway does for a client's array) and keeps what
// it read of it (the names) by its bytes, and the scripted model keeps the messages it
// decoded (workload.Seen), so a round costs a scan of its messages, not of the catalog
// and the whole conversation.
type bodyReader struct {
	known planner.KnownTools
	seen  workload.Seen // the messages the scripted model decoded
	mu    sync.Mutex
	names map[string][]string // by the tools array's bytes
	bytes int                 // the keys' bytes
}

// maxToolArrays and maxToolArrayBytes bound the arrays whose names a reader keeps (it
// starts over past either): a replay sees a few whole-catalog arrays and, under remove,
// a small one per loaded set.
const (
	maxToolArrays     = 4096
	maxToolArrayBytes = 64 << 20
)

func (b *bodyReader) read(body []byte) (*request, error) {
	o, err := oai.ParseObjectKnown(body, b.known.ForCaller(""), "tools")
	if err != nil {
		return nil, err
	}
	r := &request{obj: o, seen: &b.seen}
	r.messages, _ = o.Get("messages")
	r.tools, _ = o.Get("tools")
	r.toolChoice, _ = o.Get("tool_choice")
	if len(r.tools) == 0 {
		return r, nil
	}
	b.mu.Lock()
	names, ok := b.names[string(r.tools)]
	b.mu.Unlock()
	if ok {
		r.names = names
		return r, nil
	}
	if r.names, err = workload.ToolNames(r.tools); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.names == nil || len(b.names) >= maxToolArrays || b.bytes+len(r.tools) > maxToolArrayBytes {
		b.names, b.bytes = map[string][]string{}, 0
	}
	b.names[string(r.tools)] = r.names
	b.bytes += len(r.tools)
	b.mu.Unlock()
	return r, nil
}
