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
# E2E_DTYPE=i16 makes the channels detector-like ADC codes (the simulator's pulses, 20 kcps, on a
# baseline with ~6.6 LSB of noise) instead of f32 noise; E2E_CODEC=NAME records the data through
# that codec (`weir record --codec`, e.g. auto or shuffle+lz4). E2E_DD=MIB first writes that many
# MiB to $TMPDIR with dd (conv=fdatasync): the disk's own sustained rate in the same run, which
# each step's bytes on disk a second are compared with.
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
dtype="${E2E_DTYPE:-f32}"
codec="${E2E_CODEC:-none}"
case "$dtype" in
  f32) sample_bytes=4; signal='signal = "noise"' ;;
  i16) sample_bytes=2; signal='signal = "pulses", count_rate = 20000' ;;
  *) echo "E2E_DTYPE: f32 or i16, not $dtype" >&2; exit 2 ;;
esac
dd_mbps=""
if [[ -n ${E2E_DD:-} ]]; then
  dd_out=$(dd if=/dev/zero of="$scratch/dd.bin" bs=1M count="$E2E_DD" conv=fdatasync 2>&1 | tail -n 1)
  rm -f "$scratch/dd.bin"
  dd_mbps=$(echo "$dd_out" | awk '{ v = $(NF-1); u = $NF; if (u ~ /^GB/) v *= 1000; if (u ~ /^kB/) v /= 1000; printf "%.0f", v }')
  echo "== disk: dd of $E2E_DD MiB with fdatasync to ${TMPDIR:-/tmp}: $dd_mbps MB/s ($dd_out)"
fi
best=""
while awk -v r="$rate" -v m="$max_rate" 'BEGIN { exit !(r <= m) }'; do
  per_channel=$(awk -v r="$rate" -v c="$channels" 'BEGIN { printf "%.0f", r * 1e6 / c }')
  pipeline="$scratch/e2e.lua"
  cat > "$pipeline" <<EOF
arena { name = "e2e$$", channels = $((channels * 3 + 4)), channel_mb = $((channels * 72 + 16)), consumers = 64 }
for i = 0, $((channels - 1)) do
  channel ("in" .. i) { dtype = "$dtype", rate = $per_channel, block = 16384, ring = 256, units = "V" }
end
for i = 0, $((channels - 1)) do
  driver "sim" { channels = {"in" .. i}, name = "sim" .. i, $signal, seed = i }
end
for i = 0, $((channels - 1)) do
  shard "fft" { input = "in" .. i, size = 4096, window = "hann", spectrum = "power", overlap = 0$shard_opts }
  shard "stats" { input = "in" .. i, window = 163840$shard_opts }
end
record "hdf5" { channels = {"in*"}, out = "$scratch/rec/", policy = "lossless", flush_ms = 1000, codec = "$codec" }
EOF
  log="$scratch/run.log"
  "$weir" run "$pipeline" --duration "$seconds" --status-every 0 --replace > "$log" 2>&1 || true
  totals=$(grep -E "lost [0-9]+ block\(s\) of [0-9]+ written.*dropped at source [0-9]+, errors [0-9]+" "$log" | tail -n 1 || true)
  achieved=$(grep -oE "[0-9.]+ Hz per channel achieved, [0-9.]+ Hz requested" "$log" | sort -n | head -n 1 || true)
  if [[ -z $totals ]]; then
    echo "== $rate MS/s: weir run gave no totals; its log ends:" >&2
    tail -n 20 "$log" >&2
    break
  fi
  held=yes
  [[ $totals == *"lost 0 block(s) "* && $totals == *"dropped at source 0, errors 0"* ]] || held=no
  # Every driver must have produced its rate: the slowest one decides.
  ok_rate=$(echo "$achieved" | awk '{ if ($1 >= 0.995 * $6) print "yes"; else print "no" }')
  [[ $ok_rate == yes ]] || held=no
  mbps=$(awk -v r="$rate" -v b="$sample_bytes" 'BEGIN { printf "%.0f", r * b }')
  echo "== $rate MS/s aggregate ($channels x $per_channel S/s $dtype, $mbps MB/s, codec $codec) for $seconds s: held=$held"
  echo "   $totals; slowest sim: $achieved"
  disk_mib=$(echo "$totals" | grep -oE "disk [0-9.]+ MiB" | grep -oE "[0-9.]+" || true)
  if [[ -n $disk_mib ]]; then
    disk_mbps=$(awk -v m="$disk_mib" -v s="$seconds" 'BEGIN { printf "%.0f", m * 1048576 / 1e6 / s }')
    echo "   on disk: $disk_mbps MB/s${dd_mbps:+ (dd: $dd_mbps MB/s, ratio $(awk -v a="$disk_mbps" -v b="$dd_mbps" 'BEGIN { printf "%.2f", a / b }'))}"
  fi
  grep -E "^ *(driver|shard|record) \".*cpu" "$log" | sed -E 's/^ *//; s/ +stopped +restarts 0, last exit 0,//; s/^/   /'
  sed -n '/CPU budget/,/weir run itself/p' "$log" | sed -E 's/^ */   /'
  rm -rf "$scratch/rec"
  if [[ $held == yes ]]; then best="$rate"; else break; fi
  rate=$(awk -v r="$rate" -v f="$factor" 'BEGIN { printf "%.3g", r * f }')
done
echo "largest aggregate rate held losslessly: ${best:-none} MS/s of $dtype ($channels channels, fft + stats on each, lossless HDF5, codec $codec)"
