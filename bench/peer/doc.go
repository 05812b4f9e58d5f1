// Command peer compares maskgate with a peer gateway, Portkey's open-source AI gateway,
// on this machine: the latency each adds in front of the same OpenAI-compatible engine,
// and the CPU each spends on a request.
//
//	go run ./bench/peer [-quick] [-out DIR]
//
// # What runs
//
// One canned upstream, in this process on a loopback port (net/http/httptest), answers
// chat completions at once (-think sets a delay; none by default): a whole
// chat.completion of about 600 bytes, or a stream of seven chunks (role, four of text,
// finish, usage) and [DONE], each event flushed on its own. Four paths lead to it:
//
//   - direct: the client posts to the upstream itself, the floor the others are read
//     against;
//   - bare proxy: net/http/httputil.ReverseProxy with the gateway's upstream transport,
//     flushing every write, in a child process (this binary re-executed): the least a Go
//     process in the middle costs, and what maskgate's overhead is read against (the
//     table's last column: maskgate's p50 and CPU per request over the proxy's, from the
//     same rounds);
//   - maskgate: this repository's gateway (gateway.New over an openaicompat backend,
//     tools unmanaged: every request goes through as sent), in a child process that is
//     this same binary re-executed, so that its CPU time is its own;
//   - Portkey: @portkey-ai/gateway, pinned with its dependencies by
//     testdata/node/package-lock.json and installed there with npm ci when missing or
//     stale, started as
//     `NODE_ENV=production node --import ./loopback.mjs node_modules/@portkey-ai/gateway/build/start-server.js --port=PORT --headless`
//     (the preload only makes it listen on 127.0.0.1 rather than every interface).
//     Requests carry x-portkey-provider: openai and x-portkey-custom-host: the
//     upstream's URL with /v1, to which Portkey appends /chat/completions.
//     @hono/node-server is held at 1.13.8 through npm overrides: with the newer one that
//     npm resolves for Portkey today its streams fail (Portkey-AI/gateway #1389, #1550).
//
// Requests are bench/overhead's workload: a short conversation with 4 tools (2.3 KB) or
// with 200 (127 KB). The scenarios: 4 tools whole at 300/s and at 800/s, 4 tools
// streamed at 800/s, 200 tools whole at 100/s and at 300/s.
//
// # How it measures
//
// Load is open-loop: in each turn a path is sent requests on a fixed schedule at the
// scenario's rate whether or not earlier ones have been answered, so a gateway that
// cannot keep up queues them, and its latency, taken from each send to the answer's last
// byte, includes that wait. Each scenario runs three rounds in which the paths take turns
// (direct, bare proxy, maskgate, Portkey, direct, ...), 4 s each (1 s with -quick), after an
// unmeasured second of the same load; before the first scenario every path gets 2000
// requests of each body closed-loop (300 with -quick), which V8 needs to compile
// Portkey's hot paths. Answers are checked: a whole one must be the upstream's
// chat.completion, a stream must carry its chunks and end with [DONE] (a gateway may
// drop the usage chunk the client did not ask for).
//
// A gateway's CPU per request is its process's user+system CPU time over its turns,
// divided by the requests it answered: maskgate's from getrusage inside its process
// (read over a second loopback port), Portkey's from /proc/PID/stat (all its threads;
// 10 ms ticks, fine over a turn of a thousand requests, rough over -quick's). It counts
// whatever the process spends during its turn, timers, garbage collection and the cost
// of waking from idle between requests included, so it is higher per request at low
// rates. direct has no process of its own and no CPU figure.
//
// # How to read it
//
// It prints a Markdown table (body, rate, direct p50 / p99, each gateway's p50 / p99 and
// CPU per request) with the conditions of the run, and writes peer.md, peer.json (every
// figure, per round too, with time to first event for streams and the rate each path
// actually answered) and peer.svg (latency and CPU by scenario, three series, log
// scales) to -out, by default bench/peer/out.
//
// The load generator and the upstream share the machine's cores with the gateway being
// measured, and the gateways take turns rather than run at once. The figures compare the
// paths with each other on one machine at one time; they are not a gateway's capacity on
// dedicated hardware. A p50 in the hundreds of milliseconds means the path fell behind
// the offered rate (the notes under the table give the rate it answered); Portkey runs
// its JavaScript on one thread, so its ceiling is about one core. Portkey's stream
// handler waits 25 ms before forwarding a stream's first chunk, a fixed delay in its
// code, which sets a floor under its stream latency. The load average as the run began
// is printed: above the core count, other work was competing and the tails say more
// about it than about the gateways.
//
// It exits 1 when any request failed (the figures leave failures out and the notes give
// the first error), 2 for bad flags. Every address it uses is on loopback.
package main
