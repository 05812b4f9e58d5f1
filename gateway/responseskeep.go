package gateway

import (
	"net/http"
	"time"
)

// keepAliveEvents is a Responses stream's keep-alive: response.in_progress again, the
// response as it stands, written by the door's Writer when the stream has been silent
// for the interval (responses.Writer.KeepAlive), over SSE under the stream's lock or on
// the socket. Its time is not the answer's: it sets no time to first token and no
// client time. None for a whole response.
func (d *responsesDoor) keepAliveEvents(w http.ResponseWriter, x *exchange) func(time.Duration) (time.Duration, error) {
	if d.out == nil {
		return nil
	}
	write := func(name string, data []byte) error { return d.ws.Event(name, data) }
	if d.ws == nil {
		rc := http.NewResponseController(w)
		write = func(name string, data []byte) error {
			x.keep.lock()
			defer x.keep.unlock(false)
			for _, p := range [][]byte{sseEvent, []byte(name), sseLine, sseData, data, sseEnd} {
				if _, err := w.Write(p); err != nil {
					return err
				}
			}
			return rc.Flush()
		}
	}
	return func(interval time.Duration) (time.Duration, error) { return d.out.KeepAlive(interval, write) }
}
