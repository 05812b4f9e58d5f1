package wsock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// BenchmarkEventSend measures events through the real socket: a handler sends b.N
// events with Session.Send, a gorilla client on loopback reads them. allocs/op counts
// both ends (the client's NextReader allocates one reader per message).
func BenchmarkEventSend(b *testing.B) {
	for _, bc := range []struct {
		name     string
		size     int
		compress bool
	}{
		{"delta150B", 150, true}, // under compressMin: sent plain even when deflate is on
		{"2KiB_deflate", 2048, true},
		{"2KiB_plain", 2048, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ev := []byte(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"` +
				strings.Repeat("lorem ipsum ", bc.size/12)[:bc.size-130] + `"}`)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				Serve(w, r, Options{}, func(ctx context.Context, msg []byte, s *Session) {
					var m struct{ N int }
					json.Unmarshal(msg, &m)
					for i := 0; i < m.N; i++ {
						if s.Send(ev) != nil {
							return
						}
					}
				})
			}))
			defer srv.Close()
			d := websocket.Dialer{EnableCompression: bc.compress}
			c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"n":%d}`, b.N))
			for i := 0; i < b.N; i++ {
				_, r, err := c.NextReader()
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, r)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
			c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					break
				}
			}
		})
	}
}
