package config

import (
	"time"
)

// Config is the whole file. The zero value of each field is its default, applied by Load.
type Config struct {
	// Listen is the address to serve on. Default 127.0.0.1:4000.
	Listen string `yaml:"listen"`
	// MaxRequestBytes caps a request body; larger ones get 413. Default 16 MiB. Accepts a
	// number of bytes or a size such as "16MiB".
	MaxRequestBytes ByteSize `yaml:"max_request_bytes"`
	// Backends are the engines and APIs to route to, tried in order for wildcard models.
	Backends []Backend `yaml:"backends"`
	// Tools configures the profile's own tool catalog.
	Tools Tools `yaml:"tools"`
	// Search configures tool search and loaded-set state.
	Search Search `yaml:"search"`
	// Strategy is how tools reach the model: auto (default), eager, mask, allowed_tools,
	// remove or validate.
	Strategy string `yaml:"strategy"`

	lines map[string]int // key path → line in the file, for validation messages
}

// Backend is one upstream.
type Backend struct {
	// Name identifies the backend in logs, metrics and errors. Required, unique.
	Name string `yaml:"name"`
	// Kind is the upstream's API: llamacpp, vllm, sglang, ollama, openai, anthropic or
	// embedded. Required.
	Kind string `yaml:"kind"`
	// URL is written as that engine's own clients write it: the server root for llamacpp
	// and ollama; the OpenAI SDK base URL, with /v1, for openai, vllm and sglang.
	// Required except for embedded.
	URL string `yaml:"url"`
	// APIKeyEnv names the environment variable that holds the upstream's key. The key
	// itself never appears in the file or in logs.
	APIKeyEnv string `yaml:"api_key_env"`
	// Models are the model names routed here; "*" routes any name no other backend lists.
	Models []string `yaml:"models"`
	// Format is the tool-call wire format (hermes, llama3, mistral, harmony, deepseek);
	// detected when empty.
	Format string `yaml:"format"`
	// Timeout bounds the wait for the upstream's response headers. Default 10m.
	Timeout Duration `yaml:"timeout"`
	// Model is the GGUF file for kind embedded.
	Model string `yaml:"model"`
}

// Tools configures the catalog.
type Tools struct {
	// Files are JSON arrays of OpenAI tool objects, with optional "keywords" and
	// "category" per tool. Relative paths are relative to the config file.
	Files []string `yaml:"files"`
}

// Search configures tool search and loaded-set state.
type Search struct {
	// TopK is how many results search_tools returns. Default 5.
	TopK int `yaml:"top_k"`
	// MinScore drops results under this relevance, on a 0–1 scale. Default 0.1.
	MinScore float64 `yaml:"min_score"`
	// AutoLoad loads search results directly and hides load_tool.
	AutoLoad bool `yaml:"auto_load"`
	// Storage keeps loaded sets: memory (default) or context.
	Storage string `yaml:"storage"`
	// TTL is how long an idle thread's state is kept in memory. Default 1h.
	TTL Duration `yaml:"ttl"`
}

// Duration is a time.Duration written as "90s", "10m", "1h".
type Duration time.Duration

// ByteSize is a number of bytes written as 1048576, "512KiB", "16MiB" or "1GB".
type ByteSize int64

// Defaults.
const (
	DefaultListen          = "127.0.0.1:4000"
	DefaultMaxRequestBytes = 16 << 20
	DefaultTimeout         = 10 * time.Minute
	DefaultTopK            = 5
	DefaultMinScore        = 0.1
	DefaultTTL             = time.Hour
)

// Kinds of backend.
var Kinds = []string{"llamacpp", "vllm", "sglang", "ollama", "openai", "anthropic", "embedded"}

// Strategies a config may name.
var Strategies = []string{"auto", "eager", "mask", "allowed_tools", "remove", "validate"}

// Formats a backend may name.
var Formats = []string{"hermes", "llama3", "mistral", "harmony", "deepseek"}
