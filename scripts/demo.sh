#!/usr/bin/env bash
# The main job on embedded defaults (no hardware needed): builds weir, then runs the detector-bench
# pipeline (examples/pipelines/detector_bench.lua: simulated detector at 1 MS/s -> MCA, FFT, stats
# shards -> lossless HDF5 recorder) for WEIR_DEMO_SECONDS (default 10) and says where the file is.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== building the weir command (the first build takes a few minutes; progress below)"
scripts/build.sh weir
echo "== running examples/pipelines/detector_bench.lua"
seconds="${WEIR_DEMO_SECONDS:-10}"
build/tools/weir check examples/pipelines/detector_bench.lua
build/tools/weir run examples/pipelines/detector_bench.lua --duration "$seconds" --replace --status-every 2
file=$(ls -t runs/detector_run*.h5 | head -n 1)
echo
echo "recorded: $PWD/$file"
echo "open it:  /usr/bin/python3 -c \"import h5py; f = h5py.File('$file', 'r'); d = f['entry/det0/data']; print(d.attrs['sample_rate_hz'], d.shape, d[0, :8])\""
echo "          h5dump -H $file"
echo "replay:   build/tools/weir replay $file NAME --speed max"
