#!/usr/bin/env bash
# The whole test suite: the normal build under ctest (after the layering check), the chaos suite
# (ctest -L chaos, tests/chaos), then the core, integration and ann tests under ASan+UBSan, the
# concurrency tests under TSan, and a short bounded fuzz of the UDP packet decoders and the
# instrument reply parsers (skipped, saying so, without clang-14).
# Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/check_includes.sh
(cd build && ctest --output-on-failure -j 2 --timeout 300 -LE chaos)
# The chaos suite on its own (its scenarios kill parts at random moments and time stops against
# rotations; they share the 2 cores only with each other): about 4 minutes. Each test has its own
# TIMEOUT; --timeout is the ceiling for any without one.
echo "== chaos: kill -9 under weir run, full disk, EIO, a deleted output directory, stop at a rotation"
(cd build && ctest --output-on-failure -j 2 --timeout 300 -L chaos)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

echo "== ASan+UBSan: core, integration and ann tests"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWEIR_SANITIZE=address -DWEIR_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build build-asan -j "$(nproc)" --target weir_core_tests weir_integration_tests weir_ann_tests
for exe in build-asan/tests/core/weir_core_tests build-asan/tests/integration/weir_integration_tests build-asan/tests/ann/weir_ann_tests; do
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$exe"
done

echo "== TSan: concurrency tests"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=thread -DWEIR_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build build-tsan -j "$(nproc)" --target weir_stress_tests
TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1" build-tsan/tests/stress/weir_stress_tests

echo "== Fuzz: UDP packet decoders and instrument reply parsers, ${FUZZ_SECONDS:-5} s each"
fuzz_status=0
FUZZ_SECONDS=${FUZZ_SECONDS:-5} FUZZ_JOBS=$(nproc) timeout 600 scripts/fuzz.sh || fuzz_status=$?
if [ "$fuzz_status" -eq 77 ]; then
  echo "== Fuzz: SKIPPED (clang-14 with libFuzzer is not installed; see the line above)"
elif [ "$fuzz_status" -ne 0 ]; then
  echo "== Fuzz: FAILED (status $fuzz_status)" >&2
  exit 1
fi
echo "all test stages passed"
