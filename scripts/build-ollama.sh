#!/usr/bin/env bash
# Builds the ollama binary that maskgate's integration tests run
# (internal/enginetest calls this script; .ci/run and humans may call it to
# prebuild). The version is the one go.mod requires, so tests and gateway code
# agree on the engine they were written against.
#
# It builds inside the module's own folder in the Go module cache, against
# Ollama's own go.mod and go.sum: the binary then has the dependency versions
# of that Ollama release, and the build does not depend on which of Ollama's
# command-line dependencies maskgate's go.mod happens to list (go mod tidy
# drops the ones maskgate's code does not import).
#
# Prints the binary's absolute path as the last line of stdout; progress goes
# to stderr. A binary already in the cache is reused without rebuilding.
#
# Cache: $(cache_dir)/ollama-VERSION/ollama, where cache_dir (scripts/lib.sh) is
# ${MASKGATE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskgate}, the folder Go's
# os.UserCacheDir picks on Linux.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=lib.sh
. scripts/lib.sh

module=github.com/ollama/ollama
version="$(go list -m -f '{{.Version}}' "$module")"
version="${version#v}"

dir="$(cache_dir)/ollama-$version"
bin="$dir/ollama"
reuse_or_lock "$dir" "$bin"

# The module zip omits llama.cpp's vendored headers. Debian packages two of
# them; the third (miniaudio) is maskgate's own stand-in under cinclude/.
ensure_packages build-ollama cc headers

src="$(go list -m -f '{{.Dir}}' "$module")"
if [[ -z "$src" ]]; then
	go mod download "$module"
	src="$(go list -m -f '{{.Dir}}' "$module")"
fi

echo "build-ollama: building $module@v$version into $bin (a cold build takes 7-15 minutes on 2 cores)" >&2
start=$SECONDS
# Leftovers of a killed build; only the lock holder writes these.
rm -f "$dir"/ollama.tmp.*
tmp="$(mktemp "$dir/ollama.tmp.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
(
	cd "$src"
	# -mod=readonly: the module cache is read-only, and a developer's
	# GOFLAGS=-mod=mod must not try to rewrite Ollama's go.mod.
	CGO_ENABLED=1 \
		GOFLAGS=-mod=readonly \
		CGO_CPPFLAGS="-I$root/internal/enginetest/cinclude ${CGO_CPPFLAGS:-}" \
		go build -o "$tmp" \
		-ldflags "-X $module/version.Version=$version" \
		.
)
chmod 0755 "$tmp"
mv -f "$tmp" "$bin"
trap - EXIT
echo "build-ollama: built in $((SECONDS - start))s" >&2
echo "$bin"
