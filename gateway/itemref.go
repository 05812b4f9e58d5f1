package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/maskgate/maskgate/gateway/door"
	"github.com/maskgate/maskgate/gateway/responses"
	"github.com/maskgate/maskgate/gateway/respstore"
	"github.com/maskgate/maskgate/gateway/wsock"
)

// references resolves a request's item_references for owner: an output item of the
// socket's last response (ws may be nil) or of one of owner's stored responses, each
// response read once. A store that fails sets *failed and stops the decoding.
func (a *responsesAPI) references(ctx context.Context, owner string, ws *wsock.Session, failed *error) func(string) (json.RawMessage, *door.Error) {
	bodies := map[string][]byte{}
	return func(id string) (json.RawMessage, *door.Error) {
		rid := responses.ItemResponse(id)
		if rid == "" {
			return nil, nil
		}
		body, seen := bodies[rid]
		if !seen {
			if last, ok := wsLast(ws); ok && last.ID() == rid {
				body = last.Body()
			} else {
				b, ok, err := a.store.Keeper().Body(ctx, owner, rid)
				if err != nil {
					*failed = err
					return nil, &door.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "state_unavailable", Message: err.Error()}
				}
				if ok {
					body = b
				}
			}
			bodies[rid] = body
		}
		return responses.OutputItem(body, id), nil
	}
}

// wsLast is the socket's last response, if there is a socket and it has one.
func wsLast(ws *wsock.Session) (*respstore.Response, bool) {
	if ws == nil {
		return nil, false
	}
	last, ok := ws.Load().(*respstore.Response)
	return last, ok
}
