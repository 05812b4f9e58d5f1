package gateway

import (
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
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
