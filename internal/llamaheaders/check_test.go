//go:build llamacpp

package llamaheaders

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck_NamesWhatToInstallForEachMissingHeader builds this package's check with each
// header renamed to one no machine has, in a module of its own, and expects the go
// command's output to carry each header's message, naming its Debian package or the
// scripts that provision it. The real names are the ones TestCheck_PassesWithTheHeaders
// finds; the llama.cpp sources in the Ollama module include the same three.
func TestCheck_NamesWhatToInstallForEachMissingHeader(t *testing.T) {
	src, err := os.ReadFile("check.go")
	if err != nil {
		t.Fatal(err)
	}
	check := string(src)
	for _, h := range []string{"<nlohmann/json_fwd.hpp>", "<stb/stb_image.h>", `"miniaudio/miniaudio.h"`} {
		test := "__has_include(" + h + ")"
		if !strings.Contains(check, test) {
			t.Fatalf("check.go does not test %s", test)
		}
		check = strings.Replace(check, test, "__has_include("+h[:1]+"maskgate-absent/"+h[1:]+")", 1)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module probe\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "check.go"), []byte(check), 0o644)
	cmd := exec.Command("go", "build", "-tags", "llamacpp", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the build passed without the headers:\n%s", out)
	}
	for _, want := range []string{
		"needs <nlohmann/json_fwd.hpp>: run scripts/run-embedded or scripts/test, which install it as root, or: sudo apt-get install -y nlohmann-json3-dev libstb-dev",
		"needs <stb/stb_image.h>: run scripts/run-embedded or scripts/test, which install it as root, or: sudo apt-get install -y libstb-dev",
		"needs miniaudio/miniaudio.h, maskgate's stand-in: run scripts/run-embedded or scripts/test, or set CGO_CPPFLAGS=-I$PWD/internal/enginetest/cinclude",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the build's errors do not contain %q:\n%s", want, out)
		}
	}
}

// TestCheck_PassesWithTheHeaders: where the embedded engine builds (the llamacpp test
// suite needs the same headers), the check lets the build through.
func TestCheck_PassesWithTheHeaders(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-tags", "llamacpp", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CPPFLAGS=-I"+filepath.Join(wd, "..", "enginetest", "cinclude"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
