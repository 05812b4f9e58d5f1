package main

import (
	"path/filepath"
	"strings"

	"github.com/maskgate/maskgate/config"
)

// demoModelName is the name /v1/models lists for the random-weight demo model a llamacpp
// build serves when it finds nothing else.
const demoModelName = "maskgate-demo"

// runEmbedded is the command, from a source checkout, that runs the gateway with the
// embedded engine: it provisions the C headers the llamacpp build needs, then
// go run -tags llamacpp ./cmd/gateway with its arguments.
const runEmbedded = "scripts/run-embedded"

// embeddedBackend serves one GGUF file with the embedded engine. /v1/models lists it
// as name; it also takes every model name no other backend lists, because the engine
// holds one model and answers whatever name a request gives, as llama-server does, so
// a client with a hard-coded model name works unchanged.
func embeddedBackend(file, name string) config.Backend {
	return config.Backend{Name: "embedded", Kind: "embedded", Model: file, Models: []string{name, "*"}}
}

// ggufModelName is the name a -model file is listed under: its base name without the
// .gguf extension ("qwen2.5-0.5b-instruct-q4_k_m" for models/qwen2.5-0.5b-instruct-q4_k_m.gguf).
func ggufModelName(file string) string {
	base := filepath.Base(file)
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".gguf") && len(base) > len(ext) {
		base = base[:len(base)-len(ext)]
	}
	return base
}

// shellWord quotes s for a POSIX shell when it holds anything but letters, digits and
// -_./:=+@%, so a command printed for the user can be pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
