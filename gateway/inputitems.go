package gateway

import (
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/gateway/responses"
	"github.com/maskgate/maskgate/gateway/respstore"
)

// inputItems is GET /v1/responses/{id}/input_items: the input items of one of the
// caller's stored responses, as OpenAI lists them ({"object":"list","data","first_id",
// "last_id","has_more"}), paged by limit (1-100, default 20), order (asc or desc, the
// default) and after (an item id of the list); include is accepted and changes nothing
// (the items are kept whole). Another identity's response is as absent as an unknown
// one: 404.
func (a *responsesAPI) inputItems(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, a.host.log, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: r.Method + " is not allowed on /v1/responses/{id}/input_items; use GET"})
		return
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, a.host.log, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "limit", Code: "invalid_value",
				Message: "Invalid 'limit': expected an integer from 1 to 100, got " + strconv.Quote(v) + "."})
			return
		}
		limit = n
	}
	order := q.Get("order")
	if order == "" {
		order = "desc"
	}
	if order != "asc" && order != "desc" {
		writeError(w, a.host.log, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "order", Code: "invalid_value",
			Message: "Invalid 'order': expected 'asc' or 'desc', got " + strconv.Quote(order) + "."})
		return
	}
	items, ok, err := a.store.Keeper().Input(r.Context(), callerOf(r.Context()).name(), id)
	if err != nil {
		writeError(w, a.host.log, respstore.Unavailable(err))
		return
	}
	if !ok {
		writeError(w, a.host.log, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "response_id", Code: "response_not_found",
			Message: "Response with id '" + id + "' not found."})
		return
	}
	listed := make([][]byte, len(items))
	ids := make([]string, len(items))
	for i, it := range items {
		j := i
		if order == "desc" {
			j = len(items) - 1 - i
		}
		listed[j] = responses.InputItem(id, i, it)
		ids[j] = responses.ItemID(listed[j])
	}
	start := 0
	if after := q.Get("after"); after != "" {
		start = -1
		for i, v := range ids {
			if v == after {
				start = i + 1
			}
		}
		if start < 0 {
			writeError(w, a.host.log, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "after", Code: "invalid_value",
				Message: "Invalid 'after': no input item of response '" + id + "' has the id " + strconv.Quote(after) + "."})
			return
		}
	}
	end := min(start+limit, len(listed))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(responses.ItemList(listed[start:end], ids[start:end], end < len(listed)))
}
