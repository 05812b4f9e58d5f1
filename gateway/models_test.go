package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/openaicompat"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/tenant"
)

// TestModels_BothShapesBothEndpoints holds GET /v1/models and GET /v1/models/{id} to the
// exact bytes each client reads: OpenAI's shape without anthropic-version, Anthropic's
// (paged by limit, after_id, before_id) with it; an unknown id a 404 in each envelope;
// and a key restricted to some models seeing, and retrieving, only those.
func TestModels_BothShapesBothEndpoints(t *testing.T) {
	up := newUpstream(t, replyJSON(200, `{"object":"list","data":[{"id":"llama-3"},{"id":"Qwen/Qwen3-8B"},{"id":"m1"}]}`))
	ring := testKeys(func(k *tenant.Key) {
		if k.Name == "alice" {
			k.Models = []string{"m1", "Qwen/Qwen3-8B"}
		}
	})
	gw := gatewayFor(t, up, withKeys(ring)) // routes m1 by name and "*" by what the upstream lists

	oai := func(id string) string {
		return `{"id":"` + id + `","object":"model","created":0,"owned_by":"up"}`
	}
	ant := func(id string) string {
		return `{"type":"model","id":"` + id + `","display_name":"` + id + `","created_at":"1970-01-01T00:00:00Z"}`
	}
	page := func(more bool, ids ...string) string {
		var data []string
		for _, id := range ids {
			data = append(data, ant(id))
		}
		first, last := "null", "null"
		if len(ids) > 0 {
			first, last = `"`+ids[0]+`"`, `"`+ids[len(ids)-1]+`"`
		}
		m := "false"
		if more {
			m = "true"
		}
		return `{"data":[` + strings.Join(data, ",") + `],"has_more":` + m + `,"first_id":` + first + `,"last_id":` + last + `}`
	}
	const (
		oaiMissing = `{"error":{"message":"the model \"nope\" does not exist on this gateway; GET /v1/models lists the models it routes","type":"invalid_request_error","param":"model","code":"model_not_found"}}`
		antMissing = `{"type":"error","error":{"type":"not_found_error","message":"the model \"nope\" does not exist on this gateway; GET /v1/models lists the models it routes"}}`
	)
	for _, tt := range []struct {
		name      string
		key       string
		anthropic bool
		path      string
		status    int
		body      string
	}{
		{"openai list", carolKey, false, "/v1/models", 200,
			`{"data":[` + oai("m1") + `,` + oai("llama-3") + `,` + oai("Qwen/Qwen3-8B") + `],"object":"list"}`},
		{"openai list ignores Anthropic's paging", carolKey, false, "/v1/models?limit=1", 200,
			`{"data":[` + oai("m1") + `,` + oai("llama-3") + `,` + oai("Qwen/Qwen3-8B") + `],"object":"list"}`},
		{"openai retrieve", carolKey, false, "/v1/models/llama-3", 200, oai("llama-3")},
		{"openai retrieve, a slash in the id", carolKey, false, "/v1/models/Qwen/Qwen3-8B", 200, oai("Qwen/Qwen3-8B")},
		{"openai retrieve, the slash escaped", carolKey, false, "/v1/models/Qwen%2FQwen3-8B", 200, oai("Qwen/Qwen3-8B")},
		{"openai unknown id", carolKey, false, "/v1/models/nope", 404, oaiMissing},
		{"anthropic list", carolKey, true, "/v1/models", 200, page(false, "m1", "llama-3", "Qwen/Qwen3-8B")},
		{"anthropic first page", carolKey, true, "/v1/models?limit=2", 200, page(true, "m1", "llama-3")},
		{"anthropic next page", carolKey, true, "/v1/models?limit=2&after_id=llama-3", 200, page(false, "Qwen/Qwen3-8B")},
		{"anthropic after the last", carolKey, true, "/v1/models?after_id=Qwen%2FQwen3-8B", 200, page(false)},
		{"anthropic page before", carolKey, true, "/v1/models?limit=1&before_id=Qwen%2FQwen3-8B", 200, page(true, "llama-3")},
		{"anthropic first page before", carolKey, true, "/v1/models?limit=5&before_id=llama-3", 200, page(false, "m1")},
		{"anthropic retrieve", carolKey, true, "/v1/models/m1", 200, ant("m1")},
		{"anthropic unknown id", carolKey, true, "/v1/models/nope", 404, antMissing},
		{"anthropic limit 0", carolKey, true, "/v1/models?limit=0", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"limit: must be an integer from 1 to 1000, got \"0\""}}`},
		{"anthropic limit 1001", carolKey, true, "/v1/models?limit=1001", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"limit: must be an integer from 1 to 1000, got \"1001\""}}`},
		{"anthropic both cursors", carolKey, true, "/v1/models?after_id=m1&before_id=llama-3", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"after_id and before_id: give one of them, not both"}}`},
		{"anthropic unknown cursor", carolKey, true, "/v1/models?after_id=nope", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"after_id: \"nope\" is not a model this key may list"}}`},
		{"restricted key, openai list", aliceKey, false, "/v1/models", 200,
			`{"data":[` + oai("m1") + `,` + oai("Qwen/Qwen3-8B") + `],"object":"list"}`},
		{"restricted key, anthropic list", aliceKey, true, "/v1/models", 200, page(false, "m1", "Qwen/Qwen3-8B")},
		{"restricted key, allowed id", aliceKey, false, "/v1/models/Qwen/Qwen3-8B", 200, oai("Qwen/Qwen3-8B")},
		{"restricted key, a model outside it is unknown", aliceKey, false, "/v1/models/llama-3", 404,
			strings.ReplaceAll(oaiMissing, "nope", "llama-3")},
		{"restricted key, a model outside it is unknown to Anthropic's SDK too", aliceKey, true, "/v1/models/llama-3", 404,
			strings.ReplaceAll(antMissing, "nope", "llama-3")},
		{"restricted key, a cursor outside it", aliceKey, true, "/v1/models?after_id=llama-3", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"after_id: \"llama-3\" is not a model this key may list"}}`},
		{"no key, in Anthropic's envelope", "", true, "/v1/models/m1", 401, ""},
		{"no key, in OpenAI's envelope", "", false, "/v1/models/m1", 401, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.key != "" {
				h["x-api-key"] = tt.key
			}
			if tt.anthropic {
				h["anthropic-version"] = "2023-06-01"
			}
			status, hdr, body := send(t, http.MethodGet, gw.URL+tt.path, h, "")
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			switch {
			case tt.body != "":
				if string(body) != tt.body {
					t.Errorf("body\n got %s\nwant %s", body, tt.body)
				}
			case tt.anthropic:
				if !strings.HasPrefix(string(body), `{"type":"error","error":{"type":"authentication_error",`) {
					t.Errorf("not Anthropic's envelope: %s", body)
				}
			default:
				if typ, _, _ := envelopeOf(t, body); typ == "" {
					t.Errorf("not OpenAI's envelope: %s", body)
				}
			}
		})
	}
}

// TestModels_RetrieveIsGetOnly: other methods on /v1/models/{id} are a 405 naming GET.
func TestModels_RetrieveIsGetOnly(t *testing.T) {
	up := newUpstream(t, replyJSON(200, `{"object":"list","data":[]}`))
	gw := gatewayFor(t, up, func(o *gateway.Options, _ *openaicompat.Options) {})
	status, hdr, body := send(t, http.MethodDelete, gw.URL+"/v1/models/m1", nil, "")
	if status != 405 || hdr.Get("Allow") != "GET" {
		t.Errorf("DELETE: %d Allow %q: %s", status, hdr.Get("Allow"), body)
	}
}
