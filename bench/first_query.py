#!/usr/bin/python3
"""The first query of a fresh process: from exec to answer, and the minor page faults it took.

Creates an arena sized with `weir create --vectors N --dim D` (default 100 000 x 768), fills it
with N random vectors through the Python package, and a second arena of 100 vectors of the same dim
as the baseline. Then, each run in a fresh process, alternating between the two arenas:

  exec      `weir --version`: the floor, a fresh weir process that opens nothing
  vget      `weir vget ARENA KEY`: open the arena, read one key's vector, print it (what a client of
            the ann service does before its question, and the same pages as reading a hit's row)
  vsearch   `weir vsearch ARENA --query FILE --k 10` (big arena only): the exact search, which reads
            every row: what a first query costs when it has to map the whole partition

Wall time is from fork/exec to the child's exit (the answer is printed before it exits); CPU time
(user + system) and faults (ru_minflt) are the child's, from wait4. Medians of --runs. Removes both arenas at the end.

  PYTHONPATH=build/python /usr/bin/python3 bench/first_query.py [--vectors 100000] [--dim 768] [--runs 9]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "python"))
import weir  # noqa: E402


def run_child(cmd):
    """Runs cmd in a fresh process: (seconds from spawn to exit, CPU seconds, minor faults of the child)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_minflt


def make_arena(cli, name, count, dim):
    subprocess.run([cli, "rm", name, "--force"], capture_output=True)
    subprocess.run([cli, "create", name, "--vectors", str(count), "--dim", str(dim)], check=True, capture_output=True)
    arena = weir.Arena(name)
    rng = np.random.default_rng(1)
    for i in range(count):
        arena.set_vector(f"vec.{i:06d}", rng.standard_normal(dim, dtype=np.float32))
    arena.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vectors", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--weir", default=str(ROOT / "build" / "tools" / "weir"))
    args = p.parse_args()
    big, small = f"bench.first.{os.getpid()}", f"bench.first0.{os.getpid()}"
    query = None
    try:
        t0 = time.perf_counter()
        make_arena(args.weir, big, args.vectors, args.dim)
        make_arena(args.weir, small, 100, args.dim)
        print(f"filled {args.vectors} x {args.dim} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        key = f"vec.{args.vectors // 2:06d}"
        query = Path(f"/tmp/weir-first-query.{os.getpid()}.txt")
        query.write_text(" ".join(str(x) for x in np.random.default_rng(2).standard_normal(args.dim)))
        cases = {
            "exec": [args.weir, "--version"],
            "vget.small": [args.weir, "vget", small, "vec.000050"],
            "vget.big": [args.weir, "vget", big, key],
            "vsearch.big": [args.weir, "vsearch", big, "--query", str(query), "--k", "10"],
        }
        for cmd in cases.values():
            run_child(cmd)  # warm the page cache of the binary and the arena's pages in the kernel
        samples = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                samples[name].append(run_child(cmd))
        for name, runs in samples.items():
            ms = statistics.median(s for s, _, _ in runs) * 1e3
            cpu = statistics.median(c for _, c, _ in runs) * 1e3
            faults = statistics.median(f for _, _, f in runs)
            print(f"{name:12s} {ms:8.2f} ms wall {cpu:8.2f} ms cpu {faults:8.0f} minor faults  (median of {args.runs})")
    finally:
        if query is not None:
            query.unlink(missing_ok=True)
        for name in (big, small):
            subprocess.run([args.weir, "rm", name, "--force"], capture_output=True)


if __name__ == "__main__":
    main()
