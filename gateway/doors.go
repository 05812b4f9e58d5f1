package gateway

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/maskgate/maskgate/gateway/store"
)

// doorHost is what the doors' handlers need of the gateway: the pipeline they hand a
// request to, the request body under the server's limits, the routes, the prompt's
// token count, the log and the clock. A door holds it; it never holds the Server.
type doorHost struct {
	serve   func(http.ResponseWriter, *http.Request, doorway)                 // the pipeline (Server.serve)
	read    func(http.ResponseWriter, *http.Request) ([]byte, *[]byte, error) // a body, under the limits
	release func(*[]byte)                                                     // gives a read body's buffer back
	router  *router
	count   func(tools []byte, messages [][]byte) int // a prompt's tokens, as the budget counts them
	log     *slog.Logger
	now     func() time.Time
	hosted  string // Options.HostedTools
	// admit takes a request that skips the pipeline (a socket's warm-up) from its key's
	// limits; warmRoute checks its route as run would (Server.admitWarmUp, routeWarmUp).
	admit     func(*http.Request) (func(), error)
	warmRoute func(*http.Request, *request) error
	// betas are the OpenAI-Beta and Anthropic-Beta flags a passed request may carry
	// (Options.BetaFlags).
	betas map[string]bool
}

// doors are the handlers of the client APIs, one type per API.
type doors struct {
	chat      chatAPI
	messages  messagesAPI
	responses *responsesAPI
	models    modelsAPI
}

// newDoors is s's doors, each holding what it needs of s.
func newDoors(s *Server) doors {
	h := &doorHost{serve: s.serve, read: s.readRequest, release: s.bodies.release, router: s.router,
		count: s.planner.PromptTokens, log: s.log, now: s.now, hosted: s.opt.HostedTools,
		admit: s.admitWarmUp, warmRoute: s.routeWarmUp, betas: map[string]bool{}}
	for _, f := range s.opt.BetaFlags {
		h.betas[f] = true
	}
	return doors{
		chat:     chatAPI{host: h, known: s.planner.Known()},
		messages: messagesAPI{host: h},
		responses: &responsesAPI{host: h, store: s.responses, historyBytes: s.opt.HistoryBytes,
			passOwners: newPassOwners(defaultPassOwners, s.opt.StoreTTL, s.now), sockets: &s.sockets, perKey: newSocketCap(s.opt.SocketsPerKey), ws: s.opt.WebSocket, stopping: s.stopping},
		models: modelsAPI{router: s.router, probeTimeout: s.opt.ProbeTimeout, log: s.log},
	}
}

// SetResponseRecords has the Responses door keep stored responses (store: true, for
// previous_response_id and GET and DELETE /v1/responses/{id}) in rec rather than in
// this process's memory: every gateway given the same rec (a store.Redis) shares them,
// and a store.File keeps them across restarts. Each is kept for ttl after it is made,
// and its chain as long (zero: Options.StoreTTL); rec's own bound applies, not
// Options.StoreBytes. A nil rec goes back to memory.
//
// Call it after New and before the server serves. The caller closes rec, after the
// server has stopped. When rec fails, requests that need a stored response get a 503
// (code state_unavailable); a response that cannot be stored is answered all the same,
// and the failure logged.
func (s *Server) SetResponseRecords(rec store.Records, ttl time.Duration) {
	s.responses.SetRecords(rec, ttl)
}
