package backends

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
)

// NVExt is what the gateway writes into a Chat Completions body's nvext member for NVIDIA
// Dynamo's frontend (docs/scale-out.md names the Dynamo versions that read each member).
// The zero value writes nothing.
type NVExt struct {
	// SessionControl writes nvext.session_control.session_id, the conversation's routing
	// value: the sticky routing of Dynamo's KV router (1.1 and 1.2; 1.3 moved it to the
	// X-Dynamo-Session-ID header). A request that names no conversation gets none.
	SessionControl bool
	// SessionAction is session_control.action ("bind": router-only affinity); if empty,
	// none is written.
	SessionAction string
	// SessionTimeout is session_control.timeout in seconds; if zero, none is written
	// (Dynamo's default, 300).
	SessionTimeout int
	// Priority, StrictPriority and SpeculativePrefill are nvext.agent_hints' priority,
	// strict_priority and speculative_prefill; nil or false writes none.
	Priority           *int
	StrictPriority     *int
	SpeculativePrefill bool
}

// Empty reports whether n writes nothing.
func (n NVExt) Empty() bool {
	return !n.SessionControl && n.Priority == nil && n.StrictPriority == nil && !n.SpeculativePrefill
}

// Apply returns body with n's members merged into its nvext object, session being the
// value of session_control.session_id ("" for none). The client's own members win: a
// member of nvext.agent_hints the client set is kept, as is a session_control of its own,
// and every other byte of the body is unchanged. A body whose nvext (or
// nvext.agent_hints) is neither an object nor null is returned as it is, for the
// upstream to refuse; a body that is not a JSON object is an error.
func (n NVExt) Apply(body []byte, session string) ([]byte, error) {
	if n.Empty() {
		return body, nil
	}
	top, err := oai.ParseObject(body)
	if err != nil {
		return nil, err
	}
	ext, ok := objectOrNew(top, "nvext")
	if !ok {
		return body, nil
	}
	extBytes := ext.Bytes()
	if hints := n.agentHints(); len(hints) > 0 {
		ah, ok := objectOrNew(ext, "agent_hints")
		if !ok {
			return body, nil
		}
		ahBytes := ah.Bytes()
		for _, h := range hints {
			if _, set := ah.Get(h.key); set {
				continue
			}
			ahBytes = ah.Set(h.key, h.value)
			if ah, err = oai.ParseObject(ahBytes); err != nil {
				return nil, err
			}
		}
		extBytes = ext.Set("agent_hints", ahBytes)
		if ext, err = oai.ParseObject(extBytes); err != nil {
			return nil, err
		}
	}
	if n.SessionControl && session != "" {
		if v, set := ext.Get("session_control"); !set || bytes.Equal(v, []byte("null")) {
			extBytes = ext.Set("session_control", n.sessionControl(session))
		}
	}
	return top.Set("nvext", extBytes), nil
}

// objectOrNew returns o's member key as an object: a new empty one when it is missing or
// null; ok is false when it is something else.
func objectOrNew(o *oai.Object, key string) (*oai.Object, bool) {
	v, set := o.Get(key)
	if !set || bytes.Equal(v, []byte("null")) {
		v = []byte("{}")
	}
	obj, err := oai.ParseObject(v)
	return obj, err == nil
}

type member struct {
	key   string
	value []byte
}

func (n NVExt) agentHints() []member {
	var out []member
	if n.Priority != nil {
		out = append(out, member{"priority", strconv.AppendInt(nil, int64(*n.Priority), 10)})
	}
	if n.StrictPriority != nil {
		out = append(out, member{"strict_priority", strconv.AppendInt(nil, int64(*n.StrictPriority), 10)})
	}
	if n.SpeculativePrefill {
		out = append(out, member{"speculative_prefill", []byte("true")})
	}
	return out
}

// sessionControl renders {"session_id":session[,"action":...][,"timeout":...]}.
func (n NVExt) sessionControl(session string) []byte {
	id, _ := json.Marshal(session) // a string always marshals
	out := append([]byte(`{"session_id":`), id...)
	if n.SessionAction != "" {
		action, _ := json.Marshal(n.SessionAction)
		out = append(append(out, `,"action":`...), action...)
	}
	if n.SessionTimeout > 0 {
		out = strconv.AppendInt(append(out, `,"timeout":`...), int64(n.SessionTimeout), 10)
	}
	return append(out, '}')
}
