// Package observe is the operator's view of the gateway's requests: the request log
// (GET /admin/requests, with why each request missed the engine's cache), the live
// statistics streamed at GET /admin/events, the spans of each request (with a tracer
// provider), the dashboard's pages and session cookie, and the thread clean-up API, all
// behind the admin key.
//
// The pipeline tells a View what it knows at each point of a request — begun, a round
// begun, a round's answer read, a tool run begun, ended — through the small interface
// the gateway consumes; a View keeps what it needs of each request in the Request value
// the pipeline holds for it, and answers nothing back but a context for the spans. The
// admin endpoints are registered by View.Register on the mux the gateway hands it; what
// they show of the gateway beyond the requests (profiles, catalogs, thread state) comes
// through the functions and store Options name.
//
// It must never see a prompt, a message, a tool's arguments or its result: the events
// carry counts, names and labels only. It must never block the request path: it is
// told, it does not ask — every event is a few field updates under a short lock, the
// event streams are fed by their own publisher, and a subscriber that does not keep up
// is dropped, never waited for. It must never import the gateway.
//
// A nil *View observes nothing: every event is then a no-op, so a gateway without the
// operator's view still serves.
package observe
