#!/usr/bin/env bash
# Configures and builds weir into build/ (Release with debug info, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
