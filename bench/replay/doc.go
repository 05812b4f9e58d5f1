// Command replay replays synthetic agent work through the gateway and measures what the
// engine's prefix cache did under each tool strategy.
//
//	go run ./bench/replay [-target model] [-catalogs 20,100,500] [-out DIR]
//	CGO_CPPFLAGS="-I$PWD/internal/enginetest/cinclude" go run -tags llamacpp ./bench/replay -target embedded
//	go run ./bench/replay -target url -kind vllm -url http://127.0.0.1:8000/v1 -model qwen2.5-7b
//	go run ./bench/replay -quick
//
// For every catalog size, scenario and strategy it starts the real gateway in process
// (gateway.New behind httptest, the generated catalog as the profile's tools, thread
// state in memory, Options.Strategy set to the strategy) and drives it over HTTP as an
// OpenAI client would: a system prompt, then per task a user message and, after the tool
// call it gets back, the tool's result (bench/replay/workload). Sessions discover 3–8
// tools as they go; the gateway runs the load_tool rounds itself (server mode).
//
// Scenarios: fresh (one session on a cold engine), profile (-sessions sessions of one
// profile, one after another: mask pays the catalog's prefill once per engine, not once
// per session), concurrent (the same, -concurrency at a time), long (one session of
// -long-turns turns). Strategies: eager, remove, mask, allowed_tools, validate, index,
// auto (gateway.Options.Strategy; under auto the gateway chooses with gateway.CostChooser
// on a fresh kvcache.CostModel per run, told what the target can do). Index needs a
// backend that loads tools by definition: the prefix model does where it constrains
// (LoadsTools), as the llamacpp, vllm, sglang and embedded backends do; engine targets
// report their backend's own answer.
//
// -progressive has the gateway load the top search results for each user message
// itself; -paste N puts N words of pasted log into every user message (the same under
// every strategy); -context N tells auto's cost model the prefix model's context window.
//
// The model's choices are scripted (workload.Model), so every engine and strategy plays
// the same conversation, a random-weight model included: it calls load_tool for a tool
// it has not loaded, then the tool; for -stray of tasks it calls a tool it can see in
// the prompt before loading it, which an engine enforcing the allowed set turns into a
// load_tool call and which under validate reaches the gateway as a disabled call.
//
// Targets:
//   - model (the default, pure Go): no engine. The request is rendered ChatML-style into
//     o200k_base tokens and kvcache.BlockCache (vLLM-style blocks of -block-size) says
//     how many were cached; times are kvcache's cost model for one H200 and an 8B model.
//     This is how catalogs too big to run here (500 tools) are measured.
//   - embedded: llama.cpp in process (build tag llamacpp) on -gguf or the tiny
//     random-weight model. Token counts are the engine's own and exact; times on the
//     tiny model are NOT representative of real models, and the output says so.
//   - url: any engine or API the repository has a backend for (-kind, -url, -model).
//     Times count.
//
// On engine targets every round goes to the engine as the gateway built it — prompt,
// allowed set and all — streamed with at most -gen output tokens; the engine's usage and
// timings are kept and its output is replaced by the scripted reply. Each run starts its
// system prompt with its own number, so runs never share a cached prefix on an engine
// that outlives them.
//
// Per turn it records prompt, cached and computed tokens (the gateway's
// X-Maskgate-*-Tokens headers: every round of the request summed), the prompt of its
// last round (at a session's last turn, the context every decoded token reads), time to first token,
// decode time per output token and calls to unloaded tools; per run, the gateway's
// maskgate_disabled_tool_calls_total. Progress goes to stderr; results.md (also on
// stdout), results.json and SVG plots (computed tokens per session, hit rate per turn)
// go to -out. The targets it reports on — mask caches ≥ 99% after turn 0, computes
// ≤ 0.35× remove's tokens per session from the second session of a profile, makes no
// disabled call, auto stays within 5% of the cheapest fixed strategy, and index's
// prompt at the last turn is ≤ 0.2× mask's, ≥ 99% of it cached after turn 0, its
// computed tokens from a profile's second session ≤ 1.2× mask's (issue 40) — are
// reported by the command, never asserted by it. The package's tests hold the figures
// the README quotes: TestReplay_TheREADMEFigures reruns the default prefix-model replay
// (deterministic: token counts, no clock), TestEmbedded_TheREADMEFigures (-tags
// llamacpp) the embedded run's profile scenario.
//
// Disabled calls under mask and allowed_tools are zero by the script's construction:
// the scripted model reads the allowed set and calls load_tool where it leaves the tool
// out, and on engine targets the engine's own output is discarded. So the replay shows
// what validate's strays cost and that the gateway counts them, not that an engine
// keeps to the allowed set; the gateway's real-engine tests
// (TestMaskEngine_SeedsCallOnlyLoadedToolsOnAByteStablePrompt,
// TestE2E_SeedsOnRealOllama) grade an engine's own calls.
//
// -quick is a few seconds' run on the prefix model (20 tools, short sessions) that the
// package's test uses.
package main
