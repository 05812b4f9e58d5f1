// Package llamaheaders fails a llamacpp build, with the Debian package to install, when
// a C header that llama.cpp's sources in the Ollama module include is missing, and says
// so within seconds of the start. Without it the first sign is a C++ compiler error
// naming only the header, after minutes of compiling llama.cpp.
//
// Every package that imports github.com/ollama/ollama/llama under the build tag
// llamacpp imports this one too (blank import). It has no dependencies, so the go
// command runs its preprocessor check early, while llama.cpp compiles, and prints its
// message then (measured: 5 s into a build with llama.cpp not cached); the go command
// still finishes the compiles in flight before it exits, so the message can be acted on
// (Ctrl-C) at once. The check is a cgo preamble of __has_include tests; in a build
// without the tag the package is empty.
//
// The headers: nlohmann/json_fwd.hpp (Debian's nlohmann-json3-dev), stb/stb_image.h
// (libstb-dev), both vendored in llama.cpp's repository but omitted from the Ollama
// module zip, and miniaudio/miniaudio.h, which no Debian package has: maskgate's
// stand-in is internal/enginetest/cinclude, put on the include path with
// CGO_CPPFLAGS="-I$PWD/internal/enginetest/cinclude". scripts/run-embedded and
// scripts/test provision all three.
package llamaheaders
