package state

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkThreadState reports what one typical thread costs: eight loaded tools and one
// hidden exchange of four messages (search call, its result, load call, its result).
// bytes/thread is the store's own accounting; heap-B/thread what the Go heap grew by.
func BenchmarkThreadState(b *testing.B) {
	exchange := []json.RawMessage{
		json.RawMessage(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"post a message to slack\"}"}}]}`),
		json.RawMessage(`{"role":"tool","tool_call_id":"call_1","content":"{\"results\":[{\"name\":\"slack_send_message\",\"description\":\"Post a message to a Slack channel.\",\"score\":0.82},{\"name\":\"slack_list_channels\",\"description\":\"List the channels of a workspace.\",\"score\":0.41}],\"message\":\"Call load_tool to use one.\"}"}`),
		json.RawMessage(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"slack_send_message\"}"}}]}`),
		json.RawMessage(`{"role":"tool","tool_call_id":"call_2","content":"{\"success\":true,\"message\":\"Loaded slack_send_message.\",\"toolName\":\"slack_send_message\"}"}`),
	}
	const threads = 10000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := NewMemory(Options{})
		for i := range threads {
			id := fmt.Sprintf("0123456789abcdef0123456789abcdef/thread:%d", i)
			for k := range 8 {
				m.Load(id, fmt.Sprintf("tool_number_%02d", k))
			}
			m.AddSplice(id, Splice{After: 1, Messages: exchange})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(m.Stats().Bytes)/threads, "bytes/thread")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/threads, "heap-B/thread")
		runtime.KeepAlive(m)
	}
}
