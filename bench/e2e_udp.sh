#!/usr/bin/env bash
# End-to-end UDP benchmark: `weir udpgen` (VITA 49, i16, 8 KiB payloads = 4096 samples a packet,
# over loopback) -> a pipeline with the UDP driver -> an fft shard (4096 points, Hann, power) and a
# stats shard on the channel -> the lossless HDF5 recorder. Tries each rate in turn for SECONDS and
# reports, per step, whether it held: the driver lost no sample (<part>.adc0.lost == 0, no kernel
# drops), every datagram udpgen sent arrived, `weir run` reports 0 blocks lost at the shards and the
# recorder, 0 dropped at source and 0 errors, and the recording holds every sample sent (counted
# with h5py). Then holds the largest rate that did for CONFIRM_SECONDS (the next lower one that held
# when it does not, and so on).
#
#   bench/e2e_udp.sh [RATES_MSPS] [SECONDS] [CONFIRM_SECONDS]
#   defaults:         "10 20 40 60 80"  15  60
#
# Recordings go to $TMPDIR (default /tmp) and are removed after each step.
set -euo pipefail
cd "$(dirname "$0")/.."
rates="${1:-10 20 40 60 80}"
seconds="${2:-15}"
confirm="${3:-60}"
weir=build/tools/weir
python=/usr/bin/python3
[[ -x $weir ]] || scripts/build.sh >/dev/null
scratch="${TMPDIR:-/tmp}/weir-e2e-udp-$$"
arena="e2eudp$$"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"; rm -f /dev/shm/weir.$arena' EXIT
samples=4096  # per packet: 8 KiB of i16

# key VALUE of the arena, or empty.
key() { "$weir" get "$arena" "$1" 2>/dev/null || true; }

# run_step MSPS SECONDS: prints one report line; returns 0 when the step held.
run_step() {
  local msps=$1 secs=$2
  local rate
  rate=$(awk -v r="$msps" 'BEGIN { printf "%.0f", r * 1e6 }')
  # Ring of 4 s of blocks at this rate (at least 256), so a writeback stall of the page cache does not lap the recorder.
  local ring=256
  while (( ring * samples < rate * 4 && ring < 16384 )); do ring=$((ring * 2)); done
  local channel_mb=$(( ring * samples * 2 / 1048576 * 2 + 64 ))
  cat > "$scratch/e2e.lua" <<EOF
arena { name = "$arena", channels = 8, channel_mb = $channel_mb, consumers = 16 }
channel "adc0" { dtype = "i16", rate = $rate, block = $samples, ring = $ring, units = "counts" }
driver "udp" { name = "digitizer", channels = {"adc0"}, port = 0, format = "vita49",
               streams = { {id = 1, channel = "adc0"} }, rcvbuf = 134217728, batch = 32 }
shard "fft" { input = "adc0", size = 4096, window = "hann", spectrum = "power", overlap = 0 }
shard "stats" { input = "adc0", window = $((samples * 64)) }
record "hdf5" { channels = {"adc0"}, out = "$scratch/rec/", policy = "lossless", flush_ms = 1000 }
EOF
  local log="$scratch/run.log"
  "$weir" run "$scratch/e2e.lua" --duration $((secs + 30)) --status-every 0 --replace --keep > "$log" 2>&1 &
  local run_pid=$!
  local port="" i
  for i in $(seq 1 200); do
    port=$(key digitizer.port)
    [[ -n $port && $port != 0 ]] && break
    sleep 0.05
  done
  if [[ -z $port || $port == 0 ]]; then
    echo "== $msps MS/s: the driver did not bind (log: $(tail -n 3 "$log"))"
    kill -INT "$run_pid" 2>/dev/null || true
    wait "$run_pid" || true
    return 1
  fi
  sleep 1  # the shards and the recorder attach
  local gen
  gen=$("$weir" udpgen --port "$port" --rate "$rate" --samples $samples --seconds "$secs" --json)
  sleep 2  # the last blocks reach the recorder
  local got lost drops
  got=$(key digitizer.adc0.samples)
  lost=$(key digitizer.adc0.lost)
  drops=$(key digitizer.kernel_drops)
  kill -INT "$run_pid" 2>/dev/null || true
  wait "$run_pid" || true
  local totals
  totals=$(grep -E "lost [0-9]+ block\(s\), dropped at source [0-9]+, errors [0-9]+" "$log" | tail -n 1 || true)
  local sent achieved
  sent=$(echo "$gen" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["samples_sent"])')
  achieved=$(echo "$gen" | "$python" -c 'import json,sys; d=json.load(sys.stdin); print("%.1f" % (d["samples_sent"] / d["elapsed_s"] / 1e6))')
  local recorded
  recorded=$("$python" - "$scratch/rec" <<'EOF'
import glob, sys, h5py
n = 0
for name in sorted(glob.glob(sys.argv[1] + '/**/*.h5', recursive=True)):
    with h5py.File(name, 'r') as f:
        n += f['entry/adc0/data'].shape[0]
print(n)
EOF
)
  local held=yes
  [[ $totals == *"lost 0 block(s), dropped at source 0, errors 0"* ]] || held=no
  [[ $lost == 0 && $drops == 0 && $got == "$sent" && $recorded == "$sent" ]] || held=no
  echo "== $msps MS/s i16 ($(awk -v r="$msps" 'BEGIN { printf "%.0f", r * 2 }') MB/s, $(awk -v r="$rate" -v s=$samples 'BEGIN { printf "%.0f", r / s }') packets/s) for $secs s: held=$held"
  echo "   udpgen sent $sent samples ($achieved MS/s achieved); driver: $got received, $lost lost, $drops kernel drops; recorded $recorded"
  echo "   ${totals:-no totals line from weir run}"
  grep -E "^ *(driver|shard|record) \".*cpu" "$log" | sed -E 's/^ *//; s/ +stopped +restarts 0, last exit 0,//; s/^/   /' || true
  rm -rf "$scratch/rec"
  "$weir" rm "$arena" >/dev/null 2>&1 || true
  [[ $held == yes ]]
}

held=()
for msps in $rates; do
  if run_step "$msps" "$seconds"; then held=("$msps" "${held[@]}"); else break; fi
done
if (( ${#held[@]} == 0 )); then
  echo "no rate held for $seconds s"
  exit 1
fi
# Confirm the best rate that held, stepping down through the others when it does not hold as long.
for msps in "${held[@]}"; do
  echo "-- confirming $msps MS/s for $confirm s"
  if run_step "$msps" "$confirm"; then
    echo "largest rate held losslessly for $confirm s: $msps MS/s of i16 (8 KiB VITA 49 payloads, fft + stats, lossless HDF5)"
    exit 0
  fi
done
echo "no rate that held for $seconds s held for $confirm s"
exit 1
