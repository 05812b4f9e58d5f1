package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/kvcache"
)

// FuzzOllamaToOpenAI feeds arbitrary NDJSON through both conversions (stream chunks and
// whole completion) in every tool mode: they must never panic, and every chunk must be
// JSON with the role in the first one only.
func FuzzOllamaToOpenAI(f *testing.F) {
	f.Add([]byte(`{"message":{"role":"assistant","content":"Hel"},"done":false}
{"message":{"role":"assistant","content":"lo"},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}`))
	f.Add([]byte(`{"message":{"content":"","tool_calls":[{"id":"call_a","function":{"index":0,"name":"get_time","arguments":{"tz":"UTC","n":[1,{"x":null}]}}}]},"done":true,"done_reason":"stop"}`))
	f.Add([]byte(`{"message":{"content":"{\"name\": \"get_time\", \"arguments\": {\"tz\": 1}}"},"done":true}`))
	f.Add([]byte(`{"message":{"content":"{\"name\": \"get_ti"},"done":true,"done_reason":"length","prompt_eval_count":-5}`))
	f.Add([]byte(`{"done":true}` + "\n" + `{"message":{"content":"after"}}`))

	modes := []string{"", `,"tool_choice":"required"`, `,"tool_choice":{"type":"function","function":{"name":"get_time"}}`, `,"tool_choice":"none"`}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range modes {
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + weatherTool + `,` + timeTool + `]` + mode + `}`
			tr, err := translateRequest([]byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			est := kvcache.NewPrefixEstimator(kvcache.PrefixOptions{PerModel: 1})
			m := meta{id: "chatcmpl-1", model: "m", newCallID: counterIDs()}
			c := &chunker{t: tr, m: m, acct: newAccounting(est, tr)}
			var r reply
			n := 0
			for _, line := range bytes.Split(data, []byte("\n")) {
				var resp api.ChatResponse
				if json.Unmarshal(line, &resp) != nil {
					continue
				}
				r.add(&resp)
				chunks, err := c.add(&resp)
				for _, ch := range chunks {
					var chunk oai.Chunk
					if err := json.Unmarshal(ch, &chunk); err != nil {
						t.Fatalf("chunk is not JSON: %s", ch)
					}
					role := len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Role != ""
					if role != (n == 0) {
						t.Fatalf("chunk %d: role %v", n, role)
					}
					n++
				}
				if err != nil {
					checkUpstreamError(t, err)
					break
				}
			}
			if !r.done {
				continue
			}
			comp, err := tr.completion(&r, m, newAccounting(est, tr).settle(&r))
			if err != nil {
				checkUpstreamError(t, err)
				continue
			}
			if _, err := json.Marshal(comp); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func checkUpstreamError(t *testing.T, err error) {
	t.Helper()
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != http.StatusBadGateway {
		t.Fatalf("conversion error %v is not a 502", err)
	}
}

// FuzzTranslateRequest checks that any body either translates into a request the api
// client can send or is refused with a 400.
func FuzzTranslateRequest(f *testing.F) {
	f.Add([]byte(hello))
	f.Add([]byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2]}"}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"x"}]}],"tools":[` + weatherTool + `],"tool_choice":"required","stop":["x"],"max_tokens":3}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[` + timeTool + `],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_time"}}]}},"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, err := translateRequest(body, "")
		if err != nil {
			var be *backends.Error
			if !errors.As(err, &be) || be.Status != http.StatusBadRequest {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		b, err := json.Marshal(tr.req)
		if err != nil {
			t.Fatalf("cannot send translated request: %v", err)
		}
		if len(tr.req.Format) > 0 && !json.Valid(tr.req.Format) {
			t.Fatalf("format is not JSON: %s", tr.req.Format)
		}
		_ = canonicalPrompt(tr.req)
		_ = b
	})
}
