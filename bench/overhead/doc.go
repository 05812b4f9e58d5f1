// Command overhead measures the latency the gateway adds to a request, against a bare
// httputil.ReverseProxy measured in the same process and the same seconds.
//
//	go run ./bench/overhead [-rate 5000] [-n 20000] [-tools 4] [-json FILE]
//
// It starts a canned OpenAI-compatible upstream (bench/overhead/workload), a
// ReverseProxy in front of it and the gateway in front of it (gateway.New with the
// pass-through backend), each on its own loopback listener, and sends the same requests
// to the three at a fixed open-loop arrival rate: direct to the upstream, through the
// proxy, through the gateway. Paths take turns in blocks of -block requests, in rotating
// order, so that the machine's background noise falls on all three alike. Whole
// responses and streams are measured in turn; for a stream, the time to the first event
// (TTFT) and to the last byte.
//
// Added latency is a path's percentile minus the direct path's at the same percentile;
// the gateway's is also given as a multiple of the proxy's. Latency is timed from the
// moment a request is sent; how late the pacer sent it is reported apart, as is the
// achieved rate and every failed request.
//
// With -gateway URL it measures a running gateway instead: configure it to route the
// model "bench-model" to this tool's upstream (-upstream 127.0.0.1:18080, and a backend
// of kind vllm with url http://127.0.0.1:18080/v1). Every address must be on loopback;
// this tool refuses to send load anywhere else.
//
// It stops by itself after -n requests per path and kind of response, or at -duration.
// It prints a Markdown table and, with -json, writes the same figures to a file. The
// load generator runs on the same cores as what it measures; the output says how many.
package main
