#!/usr/bin/env bash
# The main job on embedded defaults (no hardware needed): installs the build set, builds the `weir`
# command, then runs the detector-bench pipeline (examples/pipelines/detector_bench.lua: simulated
# detector at 1 MS/s -> MCA, FFT, stats shards -> lossless HDF5 recorder) for WEIR_DEMO_SECONDS
# (default 10), audits the run from its files and says how to look at them. Prints how long each
# step took.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
step_times=()
step() {  # $1: the step's name; the rest: its command
  local name=$1 t0=$SECONDS
  shift
  "$@"
  step_times+=("$name $((SECONDS - t0)) s")
}

echo "== installing the build set (scripts/deps.sh build: what is missing)"
step "apt" scripts/deps.sh build
echo "== building the weir command (the first build takes a few minutes; progress below)"
step "configure+compile" scripts/build.sh weir
W=build/tools/weir
seconds="${WEIR_DEMO_SECONDS:-10}"
echo "== running examples/pipelines/detector_bench.lua for $seconds s"
run_pipeline() {
  "$W" check examples/pipelines/detector_bench.lua
  "$W" run examples/pipelines/detector_bench.lua --duration "$seconds" --replace --status-every 2
}
step "run" run_pipeline

file=$(ls -t runs/detector_run*.h5 | head -n 1)
run=$(basename "$file" | sed -E 's/^detector_run0*([0-9]+)_[0-9]+\.h5$/\1/')
echo "== auditing run $run from its files alone"
step "audit" "$W" audit runs --run "$run"
files=$(ls runs/detector_run"$(printf '%06d' "$run")"_*.h5 | tr '\n' ' ')
files=${files% }

echo
echo "recorded: $PWD/$file (run $run: $files)"
echo "look at it (all installed now):"
echo "  h5ls -r $file | head -n 40"
echo "  h5dump -H $file"
echo "  h5dump -d /entry/det0/data -s 0,0 -c 1,8 $file   # the first 8 samples"
echo "  $W audit runs --run $run"
echo "play it back into a new arena:"
echo "  $W create replay1 && $W replay $files replay1 --speed max && $W ls replay1; $W rm replay1"
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  echo "in Python:"
  echo "  /usr/bin/python3 -c \"import h5py; f = h5py.File('$file', 'r'); d = f['entry/det0/data']; print(d.attrs['sample_rate_hz'], d.shape, d[0, :8])\""
else
  echo "in Python (after: sudo apt-get install python3-h5py):"
  echo "  /usr/bin/python3 -c \"import h5py; f = h5py.File('$file', 'r'); d = f['entry/det0/data']; print(d.attrs['sample_rate_hz'], d.shape, d[0, :8])\""
fi
echo
echo "demo took $((SECONDS - started)) s: $(IFS=,; echo "${step_times[*]}" | sed 's/,/, /g')"
