// Package workload is the fixed traffic that maskgate's overhead is measured with: chat
// requests of a realistic shape (a short conversation with a few tools, or the same with
// hundreds of tools), and a canned OpenAI-compatible upstream that answers them with a
// whole chat.completion or a stream of chunks, usage and [DONE].
//
// The gateway's benchmarks (gateway/bench_test.go) and the load tool (bench/overhead)
// both use it, so their figures describe the same bytes.
//
// Everything here is deterministic: the same arguments give the same bytes. The upstream
// does as little work as an HTTP server can while still reading the whole request and
// flushing every event, so that what is measured around it is the path to it. It must
// never sleep, log, or vary its answers.
package workload
