//go:build llamacpp

package llamaheaders

/*
#if defined(__has_include)
#if !__has_include(<nlohmann/json_fwd.hpp>)
#error "maskgate: the embedded engine (-tags llamacpp) needs <nlohmann/json_fwd.hpp>: run scripts/run-embedded or scripts/test, which install it as root, or: sudo apt-get install -y nlohmann-json3-dev libstb-dev"
#endif
#if !__has_include(<stb/stb_image.h>)
#error "maskgate: the embedded engine (-tags llamacpp) needs <stb/stb_image.h>: run scripts/run-embedded or scripts/test, which install it as root, or: sudo apt-get install -y libstb-dev"
#endif
#if !__has_include("miniaudio/miniaudio.h")
#error "maskgate: the embedded engine (-tags llamacpp) needs miniaudio/miniaudio.h, maskgate's stand-in: run scripts/run-embedded or scripts/test, or set CGO_CPPFLAGS=-I$PWD/internal/enginetest/cinclude in the repository root"
#endif
#endif
*/
import "C"
