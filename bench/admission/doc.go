// Command admission is the load run of client keys and admission control: streaming
// clients on loopback, at a fixed arrival rate for a fixed time, through an in-process
// gateway whose keys have limits.
//
//	go run ./bench/admission [-duration 30s] [-rate 200] [-clients 64] [-chunk-delay 2ms]
//
// Two keys send the same streams (bench/overhead/workload's request, answered by its
// canned upstream with -chunk-delay between events, so that streams overlap): "steady"
// at -rate requests per second, under limits it never reaches, and "greedy" at the same
// rate with requests_per_minute set to -greedy-rpm, well under what it offers. Each
// arrival is one streaming request from a pool of -clients workers per key; an arrival
// that finds every worker busy is counted as dropped by the generator, not sent.
//
// It checks, and exits 1 unless all hold:
//   - below the limits, no errors: every steady request ends 200 with [DONE];
//   - above them, 429s: greedy gets 429 with Retry-After for what exceeds its bucket (a
//     minute's allowance at once, then one request every 60/rpm seconds), and 200 for
//     the rest, never another status;
//   - memory flat: HeapInuse, sampled every -sample, is no higher over the run's second
//     half than over its first half by more than a quarter (or 4 MiB);
//   - no leak: the load runs in two halves with nothing in flight between them, and the
//     live heap (after a GC) may grow over the second half by at most 1 KiB a request
//     (Config.MaxRetained), with at least 50 requests in that half. A leak of 2 KiB a
//     request fails it; what the first half sets up once (connections, pools) does not
//     count.
//
// It prints a Markdown table of the two keys (sent, 200, 429, other, expected 200,
// stream time p50/p99) and the memory samples (HeapInuse and RSS at start, first and
// second half, goroutines at most). Everything listens on 127.0.0.1; nothing leaves the
// machine. The generator runs on the same cores as the gateway.
package main
