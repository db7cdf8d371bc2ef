#!/usr/bin/env bash
# The whole test suite: the normal build under ctest (after the layering check), the chaos suite
# (ctest -L chaos, tests/chaos), then the core, integration, ann, serve and bridge tests under
# ASan+UBSan, the concurrency, serve and bridge tests under TSan, and a short bounded fuzz of the UDP
# packet decoders and the instrument reply parsers (skipped, saying so, without clang-14).
# Installs what it needs first (scripts/deps.sh: the build set and the test set).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed at the end (and as each stage ends).
suite_started=$SECONDS
stage_name=""
stage_started=0
stage_times=()
stage() {  # ends the stage before (if any), begins $1
  if [[ -n $stage_name ]]; then
    stage_times+=("$stage_name: $((SECONDS - stage_started)) s")
    echo "== $stage_name took $((SECONDS - stage_started)) s"
  fi
  stage_name=$1
  stage_started=$SECONDS
  [[ -z $1 ]] || echo "== $1"
}

stage "deps: the build and test sets"
scripts/deps.sh build test
stage "EPICS base: Debian's epics-base source, built once into a cache (or \$EPICS_BASE)"
epics_base=$(scripts/epics_base.sh --pva)
stage "build: everything, RelWithDebInfo, weir-epics with it"
EPICS_BASE=$epics_base scripts/build.sh
scripts/check_includes.sh
stage "ctest: every test but the chaos suite"
(cd build && ctest --output-on-failure -j 2 --timeout 300 -LE chaos)
# The chaos suite on its own (its scenarios kill parts at random moments and time stops against
# rotations; they share the 2 cores only with each other). Each test has its own TIMEOUT; --timeout
# is the ceiling for any without one.
stage "chaos: kill -9 under weir run, full disk, EIO, a deleted output directory, stop at a rotation"
(cd build && ctest --output-on-failure -j 2 --timeout 300 -L chaos)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# Paths below the checkout are hashed relative to it, and the working directory not at all: a fresh
# clone anywhere else hits the cache that an earlier build filled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# Runs a command with sanitizer reports going to files under a fresh directory, so a report from a
# child process (the `weir` a test starts, whose stderr the test may not show) fails the stage too.
# $1: "address" or "thread"; the rest: the command.
sanitized() {
  local kind=$1 logs
  shift
  logs=$(mktemp -d /tmp/weir-sanitizer.XXXXXX)
  local status=0
  if [[ $kind == address ]]; then
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$logs/asan" \
      UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan" "$@" || status=$?
  else
    TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 log_path=$logs/tsan" "$@" || status=$?
  fi
  if compgen -G "$logs/*" >/dev/null; then
    cat "$logs"/* >&2
    echo "== sanitizer reports above (from: $*)" >&2
    status=1
  fi
  rm -rf "$logs"
  return "$status"
}

# weir serve's pytest suites (real `weir serve` and `weir sim` processes) against the build in $1, but
# for the two that start a Prometheus (its scrape of /metrics is the promtool test's, without the
# wait for Prometheus, slow under the sanitizers) and those $2 names (a pytest -k expression).
serve_pytest() {
  local dir=$PWD/$1
  WEIR_CLI=$dir/tools/weir WEIR_SPIKE_WRITER=$dir/tests/tools/serve/weir_serve_spike_writer \
    WEIR_TEST_SCRATCH=$dir/serve-scratch timeout 600 /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs \
    -k "not real_prometheus${2:+ and not ($2)}" tests/tools/serve/test_server.py tests/tools/serve/test_metrics.py
}
# The bridge's tests but for the two that only check refusals of bad settings (dozens of short weir
# processes each, a minute under ASan, no threads involved).
bridge_tests() {
  "$1"/tests/bridge/weir_bridge_tests \
    --test-case-exclude="*refuses bad bridge settings*,*without keys a bridge end refuses*"
}

stage "ASan+UBSan: core, integration, ann, serve and bridge tests"
# Debug with line tables only: reports keep function, file and line, and the build is a quarter shorter.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
  -DWEIR_SANITIZE=address -DWEIR_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build build-asan -j "$(nproc)" --target weir_core_tests weir_integration_tests weir_ann_tests weir \
  weir_serve_tests weir_serve_spike_writer weir_bridge_tests
for exe in build-asan/tests/core/weir_core_tests build-asan/tests/integration/weir_integration_tests build-asan/tests/ann/weir_ann_tests \
    build-asan/tests/tools/serve/weir_serve_tests; do
  sanitized address "$exe"
done
sanitized address bridge_tests build-asan
# Under ASan, not the ten-client test (it bounds the server's RSS growth, which ASan's quarantine of
# freed memory swamps) nor the MCA one (its 20 s wait for a shard's spectrum is too short at ASan's
# pace); both run in the plain build and under TSan.
sanitized address serve_pytest build-asan "ten_websocket_clients or api_mca"

stage "TSan: concurrency, serve and bridge tests"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=thread -DWEIR_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build build-tsan -j "$(nproc)" --target weir_stress_tests weir weir_serve_tests weir_serve_spike_writer weir_bridge_tests
for exe in build-tsan/tests/stress/weir_stress_tests build-tsan/tests/tools/serve/weir_serve_tests; do
  sanitized thread "$exe"
done
sanitized thread bridge_tests build-tsan
sanitized thread serve_pytest build-tsan

stage "Fuzz: UDP packet decoders and instrument reply parsers, ${FUZZ_SECONDS:-5} s each"
fuzz_status=0
FUZZ_SECONDS=${FUZZ_SECONDS:-5} FUZZ_JOBS=$(nproc) timeout 600 scripts/fuzz.sh || fuzz_status=$?
if [ "$fuzz_status" -eq 77 ]; then
  echo "== Fuzz: SKIPPED (clang-14 with libFuzzer is not installed; see the line above)"
elif [ "$fuzz_status" -ne 0 ]; then
  echo "== Fuzz: FAILED (status $fuzz_status)" >&2
  exit 1
fi
stage ""
echo "stage times: $(IFS=';'; echo "${stage_times[*]}" | sed 's/;/; /g')"
echo "all test stages passed in $((SECONDS - suite_started)) s"
