package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// oneChoice refuses n above 1 on a request the loop runs: the loop reads one answer (a
// stream's chunks of several choices would run together into one), so a request that
// asks for several is a 400 naming n rather than a merged answer. A request passed to
// the backend as it is keeps its n: the backend honours it or refuses it itself.
func oneChoice(req *oai.Object) error {
	raw, ok := req.Get("n")
	if !ok || string(raw) == "null" {
		return nil
	}
	if n, err := strconv.Atoi(string(raw)); err == nil && n <= 1 {
		return nil
	}
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "n", Code: "unsupported_value",
		Message: "n must be 1 when the gateway runs the request's tool loop (a managed or client-mode profile, or the Responses or Messages door): it reads one answer; send n 1 or leave it out, or ask for each choice in its own request"}
}

// A stopSequencer is a sink that reports which stop sequence ended the answer
// (Messages' stop_sequence); the loop tells it before End, where the backend said.
type stopSequencer interface {
	StopSequence(s string)
}

// stopString is a stop_reason that names a stop string (vLLM's, and the llama-server
// backend's), "" for none, null or a token id.
func stopString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// tellStop tells sk, or the sink a whole answer collects into, the stop sequence that
// ended the answer, where it asks.
func tellStop(sk door.Sink, s string) {
	if wo, ok := sk.(*wholeOut); ok {
		sk = wo.bodySink
	}
	if ss, ok := sk.(stopSequencer); ok {
		ss.StopSequence(s)
	}
}
