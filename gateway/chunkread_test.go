package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
)

var chunkSeeds = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello there"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":3}}}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"reasoning_content":"hmm","content":null}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"ID":"c1","choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\""}}]}`,
	`{"id":"c1","id":"c2","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
	`{"id":null,"created":1.5,"choices":null}`,
	`{"id":"c1","created":12345678901234,"model":"m","choices":[{"index":-0,"delta":{"content":"x"},"finish_reason":"length"}],"usage":null}`,
}

func TestDecodeChunk_AsJSONUnmarshal(t *testing.T) {
	fast := 0
	for _, s := range chunkSeeds {
		checkChunk(t, []byte(s))
		var c oai.Chunk
		if fastChunk([]byte(s), &c) {
			fast++
		}
	}
	// The text chunks take the fast path: the first five and the last.
	if fast != 6 {
		t.Errorf("%d seeds took the fast path, want 6", fast)
	}
}

// FuzzDecodeChunk: whatever the bytes, decodeChunk gives what json.Unmarshal gives.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunk(t, data) })
}

func checkChunk(t *testing.T, data []byte) {
	t.Helper()
	var want, got oai.Chunk
	wantErr := json.Unmarshal(data, &want)
	err := decodeChunk(data, &got)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%s: err %v, json.Unmarshal's %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", data, got, want)
	}
}
