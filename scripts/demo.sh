#!/usr/bin/env bash
# The main job on embedded defaults: builds weir, then runs `weir demo` (no hardware needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
exec build/tools/weir demo "$@"
