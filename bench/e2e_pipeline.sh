#!/usr/bin/env bash
# End-to-end pipeline benchmark: N simulated f32 channels (one sim driver process each: generating
# gaussian noise is the costliest part) -> an fft shard (4096 points, Hann) and a
# stats shard on every channel -> one lossless HDF5 recorder of every channel. Raises the aggregate
# input rate step by step and reports, per step, whether it held for the duration with nothing
# lost, dropped at the source or produced late, and each part's CPU use (from `weir run`).
#
#   bench/e2e_pipeline.sh [CHANNELS] [FIRST_MSPS] [FACTOR] [SECONDS] [MAX_MSPS]
#   defaults:              4          4            1.5      60        400
#
# A step holds when `weir run` reports 0 lost, 0 dropped at source and 0 errors, and every sim
# channel achieved at least 99.5 % of its requested rate. The largest step that held is printed
# last. Recordings go to $TMPDIR (default /tmp) and are removed after each step.
# E2E_SHARD_OPTS is appended to every shard declaration, e.g. ', thread = false, batch_ms = 0' for
# shards as processes woken once per block (the placement before shards defaulted to threads).
set -euo pipefail
cd "$(dirname "$0")/.."
channels="${1:-4}"
rate="${2:-4}"
factor="${3:-1.5}"
seconds="${4:-60}"
shard_opts="${E2E_SHARD_OPTS:-}"
max_rate="${5:-400}"
weir=build/tools/weir
[[ -x $weir ]] || scripts/build.sh >/dev/null
scratch="${TMPDIR:-/tmp}/weir-e2e-$$"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
best=""
while awk -v r="$rate" -v m="$max_rate" 'BEGIN { exit !(r <= m) }'; do
  per_channel=$(awk -v r="$rate" -v c="$channels" 'BEGIN { printf "%.0f", r * 1e6 / c }')
  pipeline="$scratch/e2e.lua"
  cat > "$pipeline" <<EOF
arena { name = "e2e$$", channels = $((channels * 3 + 4)), channel_mb = $((channels * 72 + 16)), consumers = 64 }
for i = 0, $((channels - 1)) do
  channel ("in" .. i) { dtype = "f32", rate = $per_channel, block = 16384, ring = 256, units = "V" }
end
for i = 0, $((channels - 1)) do
  driver "sim" { channels = {"in" .. i}, name = "sim" .. i, signal = "noise", seed = i }
end
for i = 0, $((channels - 1)) do
  shard "fft" { input = "in" .. i, size = 4096, window = "hann", spectrum = "power", overlap = 0$shard_opts }
  shard "stats" { input = "in" .. i, window = 163840$shard_opts }
end
record "hdf5" { channels = {"in*"}, out = "$scratch/rec/", policy = "lossless", flush_ms = 1000 }
EOF
  log="$scratch/run.log"
  "$weir" run "$pipeline" --duration "$seconds" --status-every 0 --replace > "$log" 2>&1 || true
  totals=$(grep -E "lost [0-9]+ block\(s\), dropped at source [0-9]+, errors [0-9]+" "$log" | tail -n 1)
  achieved=$(grep -oE "[0-9.]+ Hz per channel achieved, [0-9.]+ Hz requested" "$log" | sort -n | head -n 1)
  held=yes
  [[ $totals == *"lost 0 block(s), dropped at source 0, errors 0"* ]] || held=no
  # Every driver must have produced its rate: the slowest one decides.
  ok_rate=$(echo "$achieved" | awk '{ if ($1 >= 0.995 * $6) print "yes"; else print "no" }')
  [[ $ok_rate == yes ]] || held=no
  mbps=$(awk -v r="$rate" 'BEGIN { printf "%.0f", r * 4 }')
  echo "== $rate MS/s aggregate ($channels x $per_channel S/s f32, $mbps MB/s) for $seconds s: held=$held"
  echo "   $totals; slowest sim: $achieved"
  grep -E "^ *(driver|shard|record) \".*cpu" "$log" | sed -E 's/^ *//; s/ +stopped +restarts 0, last exit 0,//; s/^/   /'
  sed -n '/CPU budget/,/weir run itself/p' "$log" | sed -E 's/^ */   /'
  rm -rf "$scratch/rec"
  if [[ $held == yes ]]; then best="$rate"; else break; fi
  rate=$(awk -v r="$rate" -v f="$factor" 'BEGIN { printf "%.3g", r * f }')
done
echo "largest aggregate rate held losslessly: ${best:-none} MS/s of f32 ($channels channels, fft + stats on each, lossless HDF5)"
