// Package enginetest runs real inference engines for Go tests: today a real
// Ollama, built from the github.com/ollama/ollama module version go.mod
// requires, serving maskgate's tiny random-weight model (bench/tinymodel) on
// a loopback port.
//
// It owns building and caching the engine binary (through
// scripts/build-ollama.sh, the one build recipe that CI and humans use too),
// the engine's process lifetime, and the test model's creation. Each call
// gives a test its own server with its own models folder and HOME, stopped
// by process group when the test ends.
//
// It never skips, but under go test -short, which asks for the quick pass and
// leaves out every test needing an engine built from source: an integration
// test that cannot build or start its engine fails loudly, with the engine's
// log, because a skipped test reads as a passing one. The README's test
// command never passes -short. It reads no environment variables itself; the build
// script reads MASKGATE_CACHE_DIR.
package enginetest
