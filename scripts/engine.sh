#!/usr/bin/env bash
# Builds the real engine make engine-test runs: llama.cpp's llama-server (CPU)
# and a tiny deterministic random-weight llama model, with no network beyond
# the npm registry.
#
#   1. npm pack node-llama-cpp@3.22.1 (its tarball ships llama.cpp's source as
#      a git bundle, llama/gitRelease.bundle: ggml-org/llama.cpp v0.5.0), the
#      tarball's sha256 checked against the pinned one;
#   2. git clone of the bundle, HEAD checked against the pinned commit;
#   3. cmake build of the llama-server target (static, GGML_NATIVE), the binary
#      cached as bin/tools/llama-server-TAG-COMMIT and reused when present;
#   4. the model written by scripts/engine-model.py with the checkout's own
#      gguf-py and Debian's numpy (/usr/bin/python3), cached as
#      bin/tools/tiny-llama-COMMIT-MODELHASH.gguf.
# cmake (and a C++ compiler) and python3-numpy are installed with apt-get
# when missing (the fresh machine has neither; it runs as root).
#
# Usage: scripts/engine.sh [--print-env]
# With --print-env it prints BENCHSEAL_LLAMA_SERVER=... and
# BENCHSEAL_LLAMA_MODEL=... lines for make engine-test. A binary named by
# BENCHSEAL_LLAMA_SERVER in the environment is used instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/bin/tools
NPM_PACKAGE=node-llama-cpp@3.22.1
NPM_TARBALL=node-llama-cpp-3.22.1.tgz
NPM_SHA256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
LLAMA_TAG=v0.5.0
LLAMA_COMMIT=de3ff815ea7d559ee917f063901b8986f038abc6
PYTHON=${BENCHSEAL_PYTHON:-/usr/bin/python3}
SHORT=${LLAMA_COMMIT:0:12}
SRC=$TOOLS/llama.cpp-$SHORT
BIN=$TOOLS/llama-server-$LLAMA_TAG-$SHORT
MODEL_HASH=$(sha256sum scripts/engine-model.py | cut -c1-12)
MODEL=$TOOLS/tiny-llama-$SHORT-$MODEL_HASH.gguf
mkdir -p "$TOOLS"
log() { echo "== engine: $*" >&2; }

# need_debs installs the Debian packages named (apt-get, no recommends) when
# one of the commands or modules they provide is missing: this machine
# (Debian 12, root) has neither cmake nor numpy for /usr/bin/python3 when
# fresh. Not root, or no apt-get: say what to install and stop.
need_debs() {
  log "installing $*"
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "engine: need the Debian packages $* (apt-get install -y --no-install-recommends $*)" >&2
    exit 1
  fi
  # The package lists of a fresh machine may be empty.
  apt-get install -y --no-install-recommends "$@" >"$TOOLS/apt.log" 2>&1 ||
    { apt-get update >>"$TOOLS/apt.log" 2>&1 && apt-get install -y --no-install-recommends "$@" >>"$TOOLS/apt.log" 2>&1; } ||
    { tail -20 "$TOOLS/apt.log" >&2; exit 1; }
}

# source: the pinned tarball from the registry, the bundle cloned at the pinned commit.
source_tree() {
  if [ -f "$SRC/.benchseal-source-ok" ]; then return; fi
  local work
  work=$(mktemp -d "$TOOLS/engine-src.XXXXXX")
  log "npm pack $NPM_PACKAGE"
  (cd "$work" && npm pack --silent "$NPM_PACKAGE" >/dev/null)
  echo "$NPM_SHA256  $work/$NPM_TARBALL" | sha256sum -c --quiet - || { echo "engine: $NPM_TARBALL: sha256 differs from the pinned one" >&2; exit 1; }
  tar -xzf "$work/$NPM_TARBALL" -C "$work" package/llama/gitRelease.bundle
  rm -rf "$SRC"
  git -c advice.detachedHead=false clone --quiet "$work/package/llama/gitRelease.bundle" "$SRC"
  local head
  head=$(git -C "$SRC" rev-parse HEAD)
  if [ "$head" != "$LLAMA_COMMIT" ]; then
    echo "engine: the bundle's HEAD is $head, want $LLAMA_COMMIT" >&2
    exit 1
  fi
  rm -rf "$work"
  touch "$SRC/.benchseal-source-ok"
}

build_server() {
  if [ -n "${BENCHSEAL_LLAMA_SERVER:-}" ]; then BIN=$BENCHSEAL_LLAMA_SERVER; log "using $BIN"; return; fi
  if [ -x "$BIN" ] && "$BIN" --version 2>&1 | grep -q "${LLAMA_COMMIT:0:7}\|${LLAMA_COMMIT:0:8}"; then log "cached $BIN"; return; fi
  source_tree
  command -v cmake >/dev/null || need_debs cmake
  command -v c++ >/dev/null || need_debs g++ make
  log "cmake build of llama-server in $SRC/build (about 30 minutes on 2 loaded cores)"
  local t0=$SECONDS
  cmake -S "$SRC" -B "$SRC/build" -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$SRC/cmake-configure.log" 2>&1 || { tail -20 "$SRC/cmake-configure.log" >&2; exit 1; }
  cmake --build "$SRC/build" --target llama-server -j"${ENGINE_JOBS:-2}" >"$SRC/cmake-build.log" 2>&1 || { tail -40 "$SRC/cmake-build.log" >&2; exit 1; }
  cp "$SRC/build/bin/llama-server" "$BIN.tmp"
  mv "$BIN.tmp" "$BIN"
  log "built $BIN in $((SECONDS - t0)) s"
}

write_model() {
  if [ -n "${BENCHSEAL_LLAMA_MODEL:-}" ]; then MODEL=$BENCHSEAL_LLAMA_MODEL; return; fi
  if [ -s "$MODEL" ]; then log "cached $MODEL"; return; fi
  source_tree
  if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
    [ "$PYTHON" = /usr/bin/python3 ] || { echo "engine: $PYTHON has no numpy" >&2; exit 1; }
    need_debs python3-numpy
  fi
  log "writing $MODEL"
  "$PYTHON" scripts/engine-model.py "$SRC" "$MODEL"
}

build_server
write_model
if [ "${1:-}" = "--print-env" ]; then
  echo "BENCHSEAL_LLAMA_SERVER=$BIN"
  echo "BENCHSEAL_LLAMA_MODEL=$MODEL"
else
  echo "$BIN"
  echo "$MODEL"
fi
