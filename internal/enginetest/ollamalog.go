package enginetest

import (
	"regexp"
	"strconv"
)

// CacheLoad is one "loading cache slot" line of an Ollama runner's debug log: the
// prompt's tokens, and how many of them the runner reused from its KV cache. Ollama
// folds cached tokens into prompt_eval_count, so this log is the only place the engine
// says what it reused. The runner writes it only with OLLAMA_DEBUG=1 in the server's
// environment (OllamaOptions.Env).
type CacheLoad struct {
	Prompt, Used int
}

var cacheLoadLine = regexp.MustCompile(`msg="loading cache slot".* prompt=(\d+) used=(\d+)`)

// CacheLoads returns the cache loads in log (LogTail's text), oldest first.
func CacheLoads(log string) []CacheLoad {
	var out []CacheLoad
	for _, m := range cacheLoadLine.FindAllStringSubmatch(log, -1) {
		p, _ := strconv.Atoi(m[1])
		u, _ := strconv.Atoi(m[2])
		out = append(out, CacheLoad{Prompt: p, Used: u})
	}
	return out
}
