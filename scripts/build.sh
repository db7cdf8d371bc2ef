#!/usr/bin/env bash
# Installs the build set of Debian packages (scripts/deps.sh build), then configures and builds weir
# into build/ (Release with debug info, warnings as errors).
#   scripts/build.sh            everything: libraries, the weir CLI, benchmarks and tests
#   scripts/build.sh TARGET…    only those targets and what they need (scripts/demo.sh: weir)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# Paths below the checkout are hashed relative to it, and the working directory not at all: a fresh
# clone anywhere else hits the cache that an earlier build filled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# EPICS base, when the environment names one (scripts/test.sh passes what scripts/epics_base.sh prints):
# weir-epics is built beside weir. Unset, the build keeps what it was configured with (none at first).
epics=()
[[ -n ${EPICS_BASE:-} ]] && epics=(-DWEIR_EPICS_BASE="$EPICS_BASE")
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_WERROR=ON "${launcher[@]}" "${epics[@]}" >/dev/null
targets=()
(($#)) && targets=(--target "$@")
cmake --build build -j "$(nproc)" "${targets[@]}"
