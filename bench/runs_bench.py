#!/usr/bin/python3
"""Controlled runs' figures (docs/design/runs.md), under `weir run` with four 1 MS/s channels:

- from `weir runctl start` to the run's first recorded block (the recorder's row in the arena says
  when it wrote it), against the channels' block period;
- from the stop to the run's files closed and synced by the recorder (fsync policy: rotation), and
  the wall time `weir runctl stop` takes (it waits for that, then audits the run's files);
- the recorder's CPU between runs (no run open), from /proc/PID/stat, against the driver's.

    bench/runs_bench.py [--weir build/tools/weir] [--runs 20] [--idle-s 10] [--run-s 0.5]

Prints medians and 90th percentiles, one JSON object last.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

RATE = 1e6
BLOCK = 4096
PIPELINE = """
arena {{ name = "{arena}", channels = 8, pool_mib = 64, runs = "controlled" }}
channel "adc0" {{ dtype = "i16", rate = {rate}, block = {block}, ring = 256 }}
channel "adc1" {{ dtype = "i16", rate = {rate}, block = {block}, ring = 256 }}
channel "adc2" {{ dtype = "i16", rate = {rate}, block = {block}, ring = 256 }}
channel "adc3" {{ dtype = "i16", rate = {rate}, block = {block}, ring = 256 }}
driver "sim" {{ channels = {{"adc0", "adc1", "adc2", "adc3"}}, signal = "noise" }}
shard "stats" {{ input = "adc0", window = 65536 }}
record "hdf5" {{ channels = {{"adc*"}}, out = "{out}" }}
"""
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weir", default="build/tools/weir")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--idle-s", type=float, default=10)
    ap.add_argument("--run-s", type=float, default=0.5)
    a = ap.parse_args()
    weir = os.path.abspath(a.weir)
    work = tempfile.mkdtemp(prefix="weir-runs-bench-")
    arena = f"runsbench{os.getpid()}"
    path = os.path.join(work, "pipeline.lua")
    with open(path, "w") as f:
        f.write(PIPELINE.format(arena=arena, rate=RATE, block=BLOCK, out=os.path.join(work, "out")))

    def status():
        return json.loads(subprocess.run([weir, "runctl", "status", arena, "--json"], check=True,
                                         capture_output=True, text=True).stdout)

    run = subprocess.Popen([weir, "run", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                s = status()
                if s["dir"] and any(r["alive"] for r in s["recorders"]):
                    break
            except (subprocess.CalledProcessError, json.JSONDecodeError):
                pass
            if time.time() > deadline:
                raise SystemExit("the pipeline did not start")
            time.sleep(0.1)
        recorder = next(r["pid"] for r in status()["recorders"] if r["alive"])
        sim = int(subprocess.run(["pgrep", "-P", str(run.pid), "-f", "weir sim"], capture_output=True,
                                 text=True).stdout.split()[0])
        time.sleep(1)
        r0, d0, t0 = cpu_s(recorder), cpu_s(sim), time.monotonic()
        time.sleep(a.idle_s)
        r1, d1, t1 = cpu_s(recorder), cpu_s(sim), time.monotonic()
        idle_recorder = 100 * (r1 - r0) / (t1 - t0)
        idle_driver = 100 * (d1 - d0) / (t1 - t0)

        first, closed, stop_wall = [], [], []
        for _ in range(a.runs):
            started = json.loads(subprocess.run([weir, "runctl", "start", arena, "--json"], check=True,
                                                capture_output=True, text=True).stdout)
            n = started["run"]
            deadline = time.time() + 30
            while True:
                rows = [r for r in status()["recorders"] if r["alive"] and r["open_run"] == n and r["first_block_ns"]]
                if rows:
                    first.append((rows[0]["first_block_ns"] - started["start_ns"]) / 1e6)
                    break
                if time.time() > deadline:
                    raise SystemExit(f"run {n} recorded nothing")
                time.sleep(0.005)
            time.sleep(a.run_s)
            w0 = time.monotonic()
            subprocess.run([weir, "runctl", "stop", arena], check=True, capture_output=True)
            stop_wall.append((time.monotonic() - w0) * 1e3)
            s = status()
            rows = [r for r in s["recorders"] if r["closed_run"] == n]
            closed.append((rows[0]["closed_ns"] - s["stop_ns"]) / 1e6)
    finally:
        run.terminate()
        run.wait(60)
        shutil.rmtree(work, ignore_errors=True)

    period_ms = BLOCK / RATE * 1e3
    print(f"4 channels x {RATE / 1e6:g} MS/s, {BLOCK}-sample blocks (period {period_ms:.3f} ms), {a.runs} runs of "
          f"{a.run_s} s")
    print(f"  start -> first recorded block: median {statistics.median(first):.2f} ms, p90 "
          f"{percentile(first, 0.9):.2f} ms (goal: <= one block period + 50 ms = {period_ms + 50:.1f} ms)")
    print(f"  stop -> files closed and synced: median {statistics.median(closed):.2f} ms, p90 "
          f"{percentile(closed, 0.9):.2f} ms")
    print(f"  weir runctl stop (waits for that, then audits): median {statistics.median(stop_wall):.1f} ms")
    print(f"  between runs: recorder {idle_recorder:.2f} % of a core (goal <= 1 %), driver {idle_driver:.1f} % "
          f"(over {a.idle_s:g} s)")
    print(json.dumps({"period_ms": period_ms, "first_block_ms_median": statistics.median(first),
                      "first_block_ms_p90": percentile(first, 0.9), "closed_ms_median": statistics.median(closed),
                      "closed_ms_p90": percentile(closed, 0.9), "stop_wall_ms_median": statistics.median(stop_wall),
                      "idle_recorder_pct": idle_recorder, "idle_driver_pct": idle_driver}))


if __name__ == "__main__":
    main()
