//go:build llamacpp

package embedded

// A missing C header is named, with the package to install, within seconds of the
// build's start, instead of by a compiler error after minutes of compiling llama.cpp.
import _ "github.com/maskgate/maskgate/internal/llamaheaders"
