# Shared by maskgate's scripts (sourced, not run): where engine builds are
# cached, and how a missing build dependency is installed or named.

# cache_dir prints the folder engine binaries and test models are cached in:
# ${MASKGATE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskgate}, the folder
# Go's os.UserCacheDir picks on Linux.
cache_dir() {
	if [[ -n "${MASKGATE_CACHE_DIR:-}" ]]; then
		echo "$MASKGATE_CACHE_DIR"
	elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
		echo "$XDG_CACHE_HOME/maskgate"
	else
		echo "$HOME/.cache/maskgate"
	fi
}

# have_header reports whether the C++ compiler finds <$1>.
have_header() {
	echo "#include <$1>" | g++ -std=c++17 -E -x c++ - >/dev/null 2>&1
}

# missing_packages prints the Debian packages, among those the maskgate build
# needs (named by the arguments: cc, ccache, cmake, git, headers, node, redis, chromium), that this
# machine lacks.
missing_packages() {
	local want
	for want in "$@"; do
		case "$want" in
		cc)
			command -v gcc >/dev/null || echo gcc
			command -v g++ >/dev/null || echo g++
			;;
		ccache) command -v ccache >/dev/null || echo ccache ;;
		cmake) command -v cmake >/dev/null || echo cmake ;;
		git) command -v git >/dev/null || echo git ;;
		headers)
			# The Ollama module zip omits llama.cpp's vendored headers;
			# Debian packages two of them (the third, miniaudio, is
			# maskgate's own stand-in under internal/enginetest/cinclude).
			if ! command -v g++ >/dev/null; then
				echo nlohmann-json3-dev
				echo libstb-dev
				continue
			fi
			have_header nlohmann/json_fwd.hpp || echo nlohmann-json3-dev
			have_header stb/stb_image.h || echo libstb-dev
			;;
		node)
			command -v node >/dev/null || echo nodejs
			command -v npm >/dev/null || echo npm
			;;
		redis) command -v redis-server >/dev/null || echo redis-server ;;
		chromium) command -v chromium >/dev/null || echo chromium ;;
		*)
			echo "missing_packages: unknown need $want" >&2
			return 2
			;;
		esac
	done
}

# ensure_packages installs, as root, the Debian packages missing_packages
# names for its arguments; any other user gets the exact apt-get line to run
# and a failure. $1 is the caller's name, for messages.
ensure_packages() {
	local who="$1"
	shift
	local missing
	mapfile -t missing < <(missing_packages "$@")
	((${#missing[@]} == 0)) && return 0
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
		echo "$who: installing ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
			{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
		mapfile -t missing < <(missing_packages "$@")
		((${#missing[@]} == 0)) && return 0
	fi
	echo "$who: missing build packages; run: sudo apt-get install -y ${missing[*]}" >&2
	return 1
}

# reuse_or_lock prints $2 (a binary in the folder $1) and exits when it is already
# built; otherwise it takes $1/build.lock on descriptor 9 — go test ./... starts several
# test binaries at once and scripts/test builds in the background, so only one may
# build — and looks again once it holds it. The caller then builds $2.
reuse_or_lock() {
	local dir="$1" bin="$2"
	mkdir -p "$dir"
	if [[ -x "$bin" ]]; then
		echo "$bin"
		exit 0
	fi
	exec 9>"$dir/build.lock"
	flock 9
	if [[ -x "$bin" ]]; then
		echo "$bin"
		exit 0
	fi
}
