#!/bin/sh
# Builds the libFuzzer targets with clang-14 (ASan + UBSan + libFuzzer) in build-fuzz/ and runs each
# for FUZZ_SECONDS (default 10) on a copy of its seed corpus. Any crash, leak or UB fails the run;
# libFuzzer leaves the input that did it in build-fuzz/ (crash-*, leak-*).
#   scripts/fuzz.sh                  # 10 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh # longer, by hand
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-10}
BUILD=build-fuzz
CC=${FUZZ_CC:-clang-14}
CXX=${FUZZ_CXX:-clang++-14}
LAUNCHER=""
command -v ccache >/dev/null 2>&1 && LAUNCHER="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"

# shellcheck disable=SC2086
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_FUZZ=ON \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  $LAUNCHER >/dev/null

# name:corpus folder, one per fuzz target
TARGETS="weir_udp_packet_fuzz:acquisition/udp/fuzz/corpus"
for entry in $TARGETS; do
  target=${entry%%:*}
  cmake --build "$BUILD" --target "$target" -j"${FUZZ_JOBS:-2}"
done

status=0
for entry in $TARGETS; do
  target=${entry%%:*}
  seeds=${entry#*:}
  work="$BUILD/corpus/$target"
  mkdir -p "$work"
  cp -n "$seeds"/* "$work"/ 2>/dev/null || true
  exe=$(find "$BUILD" -type f -name "$target" -perm -u+x | head -n 1)
  echo "fuzz: $target for ${SECONDS_EACH}s"
  if ! (cd "$BUILD" && "../$exe" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
          -timeout=10 -rss_limit_mb=2048 "../$work" "../$seeds"); then
    echo "fuzz: $target FAILED (input saved in $BUILD)" >&2
    status=1
  fi
done
exit $status
