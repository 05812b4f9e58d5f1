package enginetest

// Threads is the CPU threads every engine the tests start decodes with: llama-server
// (--threads), Ollama (the model's num_thread) and the embedded engine (its Options and
// the gateway's backends[].threads). One, because go test runs two packages at a time on
// the two-core machines the suite is sized for, and each may hold an engine: ggml's
// threads meet at a spinning barrier after every operation of the graph, so two engines
// of two threads each on two cores spend their time waiting for a thread the scheduler
// has parked. Measured on TestMask_DisabledNamesNeverComeOut (12 requests) beside a
// cold build: two threads 95-122 s and 40-43 s of CPU, one thread 41-47 s and 11-13 s.
const Threads = 1
