package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// nativeDoor is a door some upstreams speak themselves (backends.DoorPasser): when the
// gateway manages no tools for a request, the client's bytes go to such an upstream
// untouched and its answer comes back untouched.
type nativeDoor interface {
	// native is the door's name among backends.DoorPasser's.
	native() string
	// passRequest is the request as the upstream may see it (passguard.go,
	// passheaders.go): the body with hosted tools edited out or refused, the client's
	// beta flags the gateway allows; or the refusal of a continuation (a
	// previous_response_id) the caller does not own.
	passRequest(r *http.Request, body []byte) (body2 []byte, header http.Header, e passEdit, err error)
	// passed is told the upstream's answer has been read: the door records what the
	// caller now owns (the response id the upstream minted).
	passed()
	// inspect reads the request's usage from a whole answer, or from one event of a
	// stream into u (events may each carry part of it); false when there was none.
	inspect(data []byte, u *oai.Usage) bool
	// failEvent is the door's in-stream error event for e, after the events inspected.
	failEvent(e door.Error) (name string, data []byte)
}

// passNative relays a request to an upstream that speaks its door: the client's body as
// it is, the answer as it is (a stream event by event, flushed), with the usage read on
// the way for accounting and metrics.
func passNative(w http.ResponseWriter, r *http.Request, x *exchange, p backends.DoorPasser, nd nativeDoor, body []byte, stream bool) error {
	body, header, e, err := nd.passRequest(r, body)
	if err != nil {
		return err
	}
	t := x.now()
	resp, cancel, err := p.PassDoor(x.hinted(r.Context()), nd.native(), r.URL.RawQuery, header, body)
	x.upstream += x.now().Sub(t)
	if err != nil {
		return err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	defer nd.passed()
	copyPassedHeaders(w.Header(), resp.Header)
	if len(e.dropped) > 0 {
		w.Header().Set(HeaderDroppedTools, strings.Join(e.dropped, ","))
	}
	warn(e.log, w, nd.native(), e.warnings)
	w.Header().Del("Content-Length")
	var u oai.Usage
	if !stream {
		t = x.now()
		out, err := io.ReadAll(io.LimitReader(resp.Body, x.maxHeld+1))
		x.upstream += x.now().Sub(t)
		if err != nil {
			return err
		}
		if int64(len(out)) > x.maxHeld {
			return backends.TooLarge(x.backend, x.maxHeld)
		}
		if nd.inspect(out, &u) {
			x.usage, x.cache = &u, backends.CacheReported
		}
		writeWhole(w, x, resp.StatusCode, out)
		return nil
	}

	// A stream: line by line as it comes, each event flushed at its blank line; data
	// lines are read for usage. A line is bounded by the backend's response limit.
	x.cache = backends.CacheReported // both APIs report cached tokens in their usage
	rd := bufio.NewReaderSize(resp.Body, 32<<10)
	var rc *http.ResponseController
	var line []byte
	found, midEvent := false, false
	for {
		t = x.now()
		chunk, err := rd.ReadSlice('\n')
		x.upstream += x.now().Sub(t)
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if int64(len(line)) > x.maxHeld {
				return relayFailed(w, rc, x, nd, midEvent, backends.TooLarge(x.backend, x.maxHeld))
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			// A partial line is dropped: only whole lines reach the client.
			if clientGone(r.Context()) {
				return gone(r.Context())
			}
			return relayFailed(w, rc, x, nd, midEvent, backends.ReadError(x.backend, r.Context(), err, true))
		}
		if len(line) > 0 {
			if err != nil { // the upstream's last bytes, without their newline
				line = append(line, '\n')
			}
			if !x.committed {
				commitStream(w, x)
				rc = http.NewResponseController(w)
			}
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && nd.inspect(bytes.TrimSpace(data), &u) {
				found = true
			}
			midEvent = len(bytes.TrimSpace(line)) > 0
			if werr := writeLine(w, rc, x, line, !midEvent); werr != nil {
				return gone(r.Context())
			}
			line = line[:0]
		}
		if err != nil {
			break
		}
	}
	if found {
		x.usage = &u
	}
	return nil
}

// writeLine writes one line of a relayed stream, flushing at the blank line that ends
// an event.
func writeLine(w http.ResponseWriter, rc *http.ResponseController, x *exchange, line []byte, end bool) error {
	t := x.now()
	defer func() { x.client += x.now().Sub(t) }()
	if x.ttft == 0 {
		x.ttft = x.now().Sub(x.start)
	}
	if _, err := w.Write(line); err != nil {
		return err
	}
	if end {
		return rc.Flush()
	}
	return nil
}

// relayFailed ends a relayed stream that broke: before anything was sent the error goes
// to the door's envelope; after, the stream ends with the door's own error event, as the
// upstream would have sent it (a blank line first ends an event left open).
func relayFailed(w http.ResponseWriter, rc *http.ResponseController, x *exchange, nd nativeDoor, midEvent bool, err error) error {
	if !x.committed {
		return err
	}
	name, data := nd.failEvent(doorError(forClient(toAPIError(err), x.id)))
	parts := [][]byte{sseEvent, []byte(name), sseLine, sseData, data, sseEnd}
	if midEvent {
		parts = append([][]byte{sseLine}, parts...)
	}
	_ = sendFrame(w, rc, x, parts...)
	return err
}

// responsesUsage reads a Responses usage object into u.
func responsesUsage(raw []byte, u *oai.Usage) bool {
	var v struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		TotalTokens        int `json:"total_tokens"`
		InputTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	*u = oai.Usage{PromptTokens: v.InputTokens, CompletionTokens: v.OutputTokens, TotalTokens: v.TotalTokens,
		PromptTokensDetails: &oai.PromptTokensDetails{}}
	if v.InputTokensDetails != nil {
		u.PromptTokensDetails.CachedTokens = v.InputTokensDetails.CachedTokens
	}
	return true
}

// anthropicUsage accumulates Anthropic's usage over a message's events: message_start
// carries the input side, message_delta the output (and, in some versions, the input
// again); the latest value of each field wins. input_tokens counts what was not read
// from the cache, so the prompt is it plus cache reads and writes.
type anthropicUsage struct{ in, read, create, out int }

func (a *anthropicUsage) add(raw []byte, u *oai.Usage) bool {
	var v struct {
		InputTokens   *int `json:"input_tokens"`
		OutputTokens  *int `json:"output_tokens"`
		CacheRead     *int `json:"cache_read_input_tokens"`
		CacheCreation *int `json:"cache_creation_input_tokens"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	for _, f := range []struct {
		v   *int
		dst *int
	}{{v.InputTokens, &a.in}, {v.CacheRead, &a.read}, {v.CacheCreation, &a.create}, {v.OutputTokens, &a.out}} {
		if f.v != nil && (*f.v > 0 || *f.dst == 0) {
			*f.dst = *f.v
		}
	}
	*u = oai.Usage{PromptTokens: a.in + a.read + a.create, CompletionTokens: a.out,
		TotalTokens: a.in + a.read + a.create + a.out, PromptTokensDetails: &oai.PromptTokensDetails{CachedTokens: a.read}}
	return true
}
