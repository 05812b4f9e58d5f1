package state_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/maskgate/maskgate/internal/redistest"
	"github.com/maskgate/maskgate/toolsearch/state"
	"github.com/maskgate/maskgate/toolsearch/state/redisstore"
)

// BenchmarkStore is one request's worth of state work on each store: Get the thread,
// Load two names, AddSplice a four-message exchange (search call and result, load call
// and result). Each thread is a conversation of four such requests, so it ends with
// eight tools and four exchanges, as BenchmarkThreadState's typical thread.
func BenchmarkStore(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		benchStore(b, state.NewMemory(state.Options{}).Store())
	})
	b.Run("file", func(b *testing.B) {
		f, err := state.OpenFile(b.TempDir(), state.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		benchStore(b, f)
	})
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b, false)
		s, err := redisstore.New(redisstore.Options{URL: srv.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchStore(b, s)
	})
}

func benchStore(b *testing.B, s state.Store) {
	exchange := []json.RawMessage{
		json.RawMessage(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"post a message to slack\"}"}}]}`),
		json.RawMessage(`{"role":"tool","tool_call_id":"call_1","content":"{\"results\":[{\"name\":\"slack_send_message\",\"description\":\"Post a message to a Slack channel.\",\"score\":0.82},{\"name\":\"slack_list_channels\",\"description\":\"List the channels of a workspace.\",\"score\":0.41}],\"message\":\"Call load_tool to use one.\"}"}`),
		json.RawMessage(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"load_tool","arguments":"{\"toolName\":\"slack_send_message\"}"}}]}`),
		json.RawMessage(`{"role":"tool","tool_call_id":"call_2","content":"{\"success\":true,\"message\":\"Loaded slack_send_message.\",\"toolName\":\"slack_send_message\"}"}`),
	}
	var names [8]string
	for k := range names {
		names[k] = fmt.Sprintf("tool_number_%02d", k)
	}
	var ids []string // thread ids, made outside the timer
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i/4 == len(ids) {
			b.StopTimer()
			for range 1 << 14 {
				ids = append(ids, tid(len(ids)))
			}
			b.StartTimer()
		}
		th, turn := ids[i/4], i%4
		if _, _, err := s.Get(bg, th); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Load(bg, th, names[2*turn], names[2*turn+1]); err != nil {
			b.Fatal(err)
		}
		if err := s.AddSplice(bg, th, state.Splice{After: 1 + 4*turn, Messages: exchange}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
