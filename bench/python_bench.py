#!/usr/bin/python3
"""Figures of the weir Python package, each against its floor in the same run (medians of --reps):

  read      ch.read() of 64 KiB blocks vs numpy copying the same number of 64 KiB ranges out of a
            memory map of the arena (np.memmap(...)[a:b].copy()); goal >= 0.9x
  follow    a paced `weir sim` channel at 10 MS/s f32 followed by ch.follow(): blocks lost (goal 0)
  wake      a key written with its CLOCK_MONOTONIC stamp by another process; wake latency p50/p99 of
            a Python waiter (arena.watcher().wait()) against the C++ watcher (`weir watch`) woken
            by the same writes

  PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--reps 5] [--weir build/tools/weir]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "python"))
import weir  # noqa: E402

BLOCK_BYTES = 64 * 1024


def weir_cli(args, *cmd, **kw):
    return subprocess.run([args.weir, *map(str, cmd)], check=True, capture_output=True, text=True, **kw)


def bench_read(args, name):
    writer = ROOT / "build" / "tests" / "python" / "weir_py_counter_writer"
    subprocess.run([str(writer), name, "r64k", "--block", str(BLOCK_BYTES // 8), "--ring", "64", "--blocks", "64"], check=True,
                   capture_output=True)
    arena = weir.Arena(name)
    ch = arena.channel("r64k")
    mm = np.memmap(f"/dev/shm/weir.{name}", dtype=np.uint8, mode="r")
    base = mm.size - 64 * BLOCK_BYTES  # any 4 MiB of the mapping costs the same to copy
    n = 20000
    out = {}
    dst = np.empty(BLOCK_BYTES, dtype=np.uint8)
    for label, fn in (
            ("weir read(1)", lambda i: ch.read(1, start=i % 64)),
            ("memmap copy", lambda i: mm[base + (i % 64) * BLOCK_BYTES: base + (i % 64 + 1) * BLOCK_BYTES].copy()),
            ("weir read(1, out=)", lambda i: ch.read(1, start=i % 64, out=dst)),
            ("memmap copyto(out)", lambda i: np.copyto(dst, mm[base + (i % 64) * BLOCK_BYTES:
                                                              base + (i % 64 + 1) * BLOCK_BYTES])),
    ):
        fn(0)
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        out[label] = n * BLOCK_BYTES / (time.perf_counter() - t0) / 1e9
    t0 = time.perf_counter()
    for i in range(n // 16):
        ch.read(16, start=(i * 16) % 48)
    out["weir read(16)"] = n * BLOCK_BYTES / (time.perf_counter() - t0) / 1e9
    t0 = time.perf_counter()
    for i in range(n // 16):
        s = base + ((i * 16) % 48) * BLOCK_BYTES
        mm[s:s + 16 * BLOCK_BYTES].copy()
    out["memmap copy x16"] = n * BLOCK_BYTES / (time.perf_counter() - t0) / 1e9
    arena.close()
    return out


def bench_follow(args, name):
    sim = subprocess.Popen([args.weir, "sim", name, "f10m", "--rate", "1e7", "--block", "16384", "--duration",
                            str(args.follow_s), "--json"], stdout=subprocess.PIPE, text=True)
    arena = weir.Arena(name)
    while "f10m" not in arena.channels:
        time.sleep(0.01)
    ch = arena.channel("f10m")
    samples = blocks = 0
    t0 = time.perf_counter()
    with ch.follow(policy="lossy", start="oldest", timeout=1.0) as f:
        for block in f:
            samples += block.samples
            blocks += 1
        lost = f.lost
    elapsed = time.perf_counter() - t0 - 1.0
    report = json.loads(sim.communicate()[0])
    arena.close()
    return {"blocks": blocks, "lost": lost, "published": report["blocks_published"],
            "MS/s": samples / elapsed / 1e6}


def bench_wake(args, name):
    n = args.wake_n
    arena = weir.Arena(name)
    arena.set("lat", 0, type="u64")
    cxx = subprocess.Popen([args.weir, "watch", name, "--key", "lat", "--json", "--count", str(n)], stdout=subprocess.PIPE,
                           text=True)
    py_lat = []
    ready = threading.Event()

    def waiter():
        a = weir.Arena(name)
        with a.watcher(keys=["lat"]) as w:
            ready.set()
            while len(py_lat) < n:
                if w.wait(timeout=5.0):
                    now = time.monotonic_ns()
                    py_lat.append(now - a["lat"])
                else:
                    break

    t = threading.Thread(target=waiter)
    t.start()
    ready.wait()
    time.sleep(0.3)  # weir watch subscribes
    writer = subprocess.run([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {str(ROOT / 'build' / 'python')!r})
import weir
a = weir.Arena({name!r})
for i in range({n}):
    a.set("lat", time.monotonic_ns(), type="u64")
    time.sleep(0.002)
"""], check=True)
    t.join()
    out, _ = cxx.communicate(timeout=60)
    cxx_lat = [json.loads(line)["latency_us"] * 1e3 for line in out.splitlines() if "latency_us" in line]
    arena.close()

    def pct(v, p):
        return float(np.percentile(np.asarray(v, dtype=np.float64), p)) / 1e3
    return {"python p50 us": pct(py_lat, 50), "python p99 us": pct(py_lat, 99),
            "weir watch p50 us": pct(cxx_lat, 50) if cxx_lat else float("nan"),
            "weir watch p99 us": pct(cxx_lat, 99) if cxx_lat else float("nan"),
            "python wakes": len(py_lat), "weir watch wakes": len(cxx_lat)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--weir", default=str(ROOT / "build" / "tools" / "weir"))
    p.add_argument("--follow-s", type=float, default=5.0)
    p.add_argument("--wake-n", type=int, default=1000)
    p.add_argument("--only", choices=["read", "follow", "wake"])
    args = p.parse_args()
    results = {}
    for rep in range(args.reps):
        for what, fn in (("read", bench_read), ("follow", bench_follow), ("wake", bench_wake)):
            if args.only and what != args.only:
                continue
            name = f"pybench-{os.getpid()}-{what}-{rep}"
            weir_cli(args, "create", name)
            try:
                for k, v in fn(args, name).items():
                    results.setdefault(f"{what}: {k}", []).append(v)
            finally:
                subprocess.run([args.weir, "rm", name, "--force"], capture_output=True)
    print(f"median of {args.reps} runs (min-max):")
    for k, v in results.items():
        print(f"  {k:32s} {statistics.median(v):10.3f}   ({min(v):.3f}-{max(v):.3f})")
    if "read: weir read(1)" in results:
        ratios = [a / b for a, b in zip(results["read: weir read(1)"], results["read: memmap copy"])]
        ratios_out = [a / b for a, b in zip(results["read: weir read(1, out=)"], results["read: memmap copyto(out)"])]
        print(f"  read(1,out=) / copyto(out) ratio {statistics.median(ratios_out):10.3f}   "
              f"({min(ratios_out):.3f}-{max(ratios_out):.3f})  goal >= 0.9")
        ratios16 = [a / b for a, b in zip(results["read: weir read(16)"], results["read: memmap copy x16"])]
        print(f"  read(1) / memmap copy ratio      {statistics.median(ratios):10.3f}   ({min(ratios):.3f}-{max(ratios):.3f})"
              f"  goal >= 0.9")
        print(f"  read(16) / memmap x16 ratio      {statistics.median(ratios16):10.3f}   ({min(ratios16):.3f}-{max(ratios16):.3f})"
              f"  goal >= 0.9")


if __name__ == "__main__":
    main()
