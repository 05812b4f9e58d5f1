//go:build llamacpp

package masking

// A missing C header is named, with the package to install, within seconds of the
// build's start, instead of by a compiler error after minutes of compiling llama.cpp
// (gbnf_llamacpp_test.go imports the Ollama module's llama package).
import _ "github.com/maskgate/maskgate/internal/llamaheaders"
