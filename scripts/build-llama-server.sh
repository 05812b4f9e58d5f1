#!/usr/bin/env bash
# Builds the llama-server binary that maskgate's integration tests run
# against (internal/enginetest calls this script; scripts/test starts it in
# the background while Go compiles; humans may call it to prebuild).
#
# llama.cpp's source is not fetchable as a repository from the registries
# this project builds from, but the npm package node-llama-cpp ships the
# whole source tree of the llama.cpp release it binds as a git bundle
# (llama/gitRelease.bundle, the release named in llama/llama.cpp.info.json).
# The script fetches that package with npm at a pinned version and checks it
# against the registry's pinned integrity, clones the bundle, checks the
# commit, and builds only the llama-server target with cmake on the CPU:
# static, no web UI download, no OpenSSL, no CPU-specific code beyond AVX2
# (GGML_NATIVE=OFF), so a cached binary runs on any x86-64 machine of the
# same libc. It is a unity build (scripts/llama-server-unity.cmake): a few large
# translation units per library instead of one per file: about 700 s of CPU on 2 cores
# against 1,214 s.
#
# Prints the binary's absolute path as the last line of stdout; progress goes
# to stderr. A binary already in the cache is reused without rebuilding.
# Cache: $(cache_dir)/llama-server-RELEASE-COMMIT/llama-server, where
# cache_dir is ${MASKGATE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskgate}.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib.sh
. "$root/scripts/lib.sh"

# The pin: node-llama-cpp 3.22.1 ships llama.cpp release v0.5.0 at this commit.
npm_package=node-llama-cpp@3.22.1
npm_integrity=sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw==
release=v0.5.0
commit=de3ff815ea7d559ee917f063901b8986f038abc6

# The folder names the recipe too (-unity): a binary of the earlier per-file build is
# not taken for this one.
dir="$(cache_dir)/llama-server-$release-${commit:0:10}-unity"
bin="$dir/llama-server"
reuse_or_lock "$dir" "$bin"

ensure_packages build-llama-server cc cmake git node

start=$SECONDS
work="$dir/work"
rm -rf "$work" "$dir"/llama-server.tmp.*
mkdir -p "$work"
trap 'rm -rf "$work" "$dir"/llama-server.tmp.*' EXIT

echo "build-llama-server: fetching $npm_package (the llama.cpp $release source bundle)" >&2
(cd "$work" && npm pack --silent "$npm_package" >/dev/null)
tgz="$(ls "$work"/node-llama-cpp-*.tgz)"
got="sha512-$(openssl dgst -sha512 -binary "$tgz" 2>/dev/null | base64 -w0 || true)"
if [[ "$got" == "sha512-" ]]; then
	got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
fi
if [[ "$got" != "$npm_integrity" ]]; then
	echo "build-llama-server: $tgz has integrity $got, want $npm_integrity" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$work" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
if ! grep -q "\"tag\": \"$release\"" "$work/package/llama/llama.cpp.info.json"; then
	echo "build-llama-server: $npm_package names another release:" >&2
	cat "$work/package/llama/llama.cpp.info.json" >&2
	exit 1
fi
git clone --quiet --no-checkout "$work/package/llama/gitRelease.bundle" "$work/src"
git -C "$work/src" -c advice.detachedHead=false checkout --quiet "$commit"
rm -rf "$work/package" "$tgz"

echo "build-llama-server: building llama-server ($release, ${commit:0:10}) into $bin (a cold build takes about 6 minutes on 2 cores)" >&2
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$work/src" -B "$work/build" \
	-DCMAKE_BUILD_TYPE=Release \
	-DBUILD_SHARED_LIBS=OFF \
	-DGGML_NATIVE=OFF \
	-DGGML_CCACHE=OFF \
	-DLLAMA_BUILD_SERVER=ON \
	-DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_UI=OFF \
	-DLLAMA_USE_PREBUILT_UI=OFF \
	-DLLAMA_OPENSSL=OFF \
	-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$root/scripts/llama-server-unity.cmake" >&2
cmake --build "$work/build" --target llama-server -j "$jobs" >&2

tmp="$(mktemp "$dir/llama-server.tmp.XXXXXX")"
cp "$work/build/bin/llama-server" "$tmp"
chmod 0755 "$tmp"
"$tmp" --version >&2
mv -f "$tmp" "$bin"
echo "build-llama-server: built in $((SECONDS - start))s" >&2
echo "$bin"
