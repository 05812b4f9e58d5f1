package backends

import "context"

// ContentNoter is a backend that leaves out of a request what its engine cannot take (an
// image for a model that cannot see, an image by URL for one that reads images only as
// data) and puts a note in its place, so that the turn, and every later turn carrying it
// in its history, still goes on. Notes says what it will leave out of body, a Chat
// Completions request, one warning each ("messages[1].content[0]: image omitted: this
// model cannot read images"), before anything is sent; nil when nothing. The gateway
// shows them to the client as warnings.
type ContentNoter interface {
	Notes(ctx context.Context, body []byte) []string
}
