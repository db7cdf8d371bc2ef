#!/bin/sh
# Builds the libFuzzer targets with clang-14 (ASan + UBSan + libFuzzer) in build-fuzz/ and runs each
# for FUZZ_SECONDS (default 10) on a temporary copy of its seed corpus (the seeds in the tree are
# never written). Any crash, leak or UB fails the run; libFuzzer leaves the input that did it in
# build-fuzz/ (crash-*, leak-*, timeout-*).
#   scripts/fuzz.sh                  # 10 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh # longer, by hand
#   FUZZ_KEEP=1 scripts/fuzz.sh      # keep what each run added to its corpus (in build-fuzz/corpus/)
# Exit status: 0 all clean, 1 a target failed, 77 clang-14 or libFuzzer is missing (nothing ran).
# Targets:
#   weir_udp_packet_fuzz            VITA 49 and raw packet decoders, the stream assembler (acquisition/udp/fuzz)
#   weir_fuzz_instrument_reply      line framing, reply parsers, command formats (acquisition/instrument/fuzz)
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-10}
BUILD=build-fuzz
CC=${FUZZ_CC:-clang-14}
CXX=${FUZZ_CXX:-clang++-14}

# libFuzzer ships with clang's runtime (Debian: clang-14 pulls in libclang-rt-14-dev / libclang-common-14-dev).
if ! command -v "$CXX" >/dev/null 2>&1 || ! command -v "$CC" >/dev/null 2>&1; then
  echo "fuzz: SKIPPED: $CXX not found (apt-get install clang-14)" >&2
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/p.cpp"
if ! "$CXX" -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz: SKIPPED: $CXX cannot link -fsanitize=fuzzer (libFuzzer runtime missing)" >&2
  exit 77
fi

LAUNCHER=""
command -v ccache >/dev/null 2>&1 && LAUNCHER="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"

# shellcheck disable=SC2086
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_FUZZ=ON \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  $LAUNCHER >/dev/null

# name:corpus folder, one per fuzz target
TARGETS="weir_udp_packet_fuzz:acquisition/udp/fuzz/corpus weir_fuzz_instrument_reply:acquisition/instrument/fuzz/corpus"
names=""
for entry in $TARGETS; do names="$names ${entry%%:*}"; done
# shellcheck disable=SC2086
cmake --build "$BUILD" --target $names -j"${FUZZ_JOBS:-2}"

status=0
for entry in $TARGETS; do
  target=${entry%%:*}
  seeds=$PWD/${entry#*:}
  work="$probe/$target"
  mkdir -p "$work"
  cp "$seeds"/* "$work"/
  exe=$(find "$PWD/$BUILD" -type f -name "$target" -perm -u+x | head -n 1)
  echo "fuzz: $target for ${SECONDS_EACH}s on a copy of ${entry#*:}"
  if ! (cd "$BUILD" && "$exe" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
          -timeout=10 -rss_limit_mb=2048 "$work"); then
    echo "fuzz: $target FAILED (the input is saved in $BUILD)" >&2
    status=1
  fi
  if [ -n "${FUZZ_KEEP:-}" ]; then
    mkdir -p "$BUILD/corpus/$target"
    cp "$work"/* "$BUILD/corpus/$target"/
  fi
done
exit $status
