#!/usr/bin/python3
"""Eight data-logger boxes into one Kafka file-writer, on this machine.

Each box is an arena with `weir sim` writing one channel (boxN_adc0) and `weir kafka send` producing
it to its own topic (boxN) on a 3-broker mock cluster (`weir kafka mock`, replication 3); one
`weir record --from-kafka` takes all eight topics into one run. Reported: the rate the boxes wrote
and the writer recorded, the writer's lag (messages behind the high watermarks, sampled every
0.5 s), the senders' counters, the writer's summary and `weir audit`'s ledger of the run. Exits 1
when the ledger is not exact (a block written twice, a block unaccounted, a gap row, a box's block
missing from the files).

  bench/kafka_eight_boxes.py --weir build/tools/weir [--boxes 8] [--blocks 1000] [--rate 1e5] [--block 1000]
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weir", default="build/tools/weir")
    ap.add_argument("--boxes", type=int, default=8)
    ap.add_argument("--blocks", type=int, default=1000, help="blocks each box writes")
    ap.add_argument("--rate", type=float, default=1e5, help="samples per second of each box")
    ap.add_argument("--block", type=int, default=1000, help="samples per block (f32)")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    weir = os.path.abspath(a.weir)
    # The mock cluster keeps about 5 MiB per partition: a box's whole run must fit, or the writer
    # would meet offsets already deleted (counted, but not what this measures).
    if a.blocks * a.block * 4 > 4 << 20:
        sys.exit("kafka_eight_boxes: a box's run must stay under 4 MiB (the mock cluster's retention)")
    tag = f"k8b{os.getpid()}"
    out = tempfile.mkdtemp(prefix="weir-k8b-")
    procs = []

    def spawn(args, **kw):
        p = subprocess.Popen([weir, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        procs.append(p)
        return p

    def key(arena, name):
        r = subprocess.run([weir, "get", arena, name], capture_output=True, text=True)
        return int(float(r.stdout.strip())) if r.returncode == 0 and r.stdout.strip() else 0

    try:
        topics = [f"box{i}" for i in range(1, a.boxes + 1)]
        mock = spawn(["kafka", "mock", "--brokers", 3, "--json", *sum((["--topic", t] for t in topics), [])])
        boot = json.loads(mock.stdout.readline())["bootstrap"]
        sources = sum((["--topic", t] for t in topics), []) + sum((["--source", f"{t}_adc0"] for t in topics), [])
        writer = spawn(["record", tag, "--from-kafka", boot, *sources, "--out", out, "--json"])
        arenas = [f"{tag}.{t}" for t in topics]
        for arena, t in zip(arenas, topics):
            subprocess.run([weir, "create", arena, "--pool", "64"], check=True, capture_output=True)
            # The channel first (a ring that holds the whole run), then its sender, then the writes.
            subprocess.run([weir, "sim", arena, f"{t}_adc0", "--rate", str(a.rate), "--block", str(a.block), "--blocks",
                            "1", "--ring", "2048"], check=True, capture_output=True)
        senders = [spawn(["kafka", "send", arena, "--brokers", boot, "--topic", t, "--name", t, "--newest"])
                   for arena, t in zip(arenas, topics)]
        deadline = time.monotonic() + 20
        while any(key(arena, f"kafka.{t}.channels") < 1 for arena, t in zip(arenas, topics)):
            if time.monotonic() > deadline:
                sys.exit("kafka_eight_boxes: the senders did not find their channels")
            time.sleep(0.1)
        staging = f"{tag}.{writer.pid}"
        t0 = time.monotonic()
        sims = [spawn(["sim", arena, f"{t}_adc0", "--rate", a.rate, "--block", a.block, "--blocks", a.blocks,
                       "--signal", "noise", "--seed", i]) for i, (arena, t) in enumerate(zip(arenas, topics))]
        lag_max = 0
        while True:
            r = subprocess.run([weir, "keys", staging], capture_output=True, text=True)
            lag = sum(key(staging, m.group(0)) for m in re.finditer(r"kafka\.\S+\.lag\b", r.stdout))
            lag_max = max(lag_max, lag)
            delivered = sum(key(arena, f"kafka.{t}.delivered") for arena, t in zip(arenas, topics))
            if all(s.poll() is not None for s in sims) and delivered >= a.boxes * a.blocks and lag == 0:
                break
            if time.monotonic() - t0 > a.timeout:
                print(r.stdout, file=sys.stderr)
                sys.exit(f"kafka_eight_boxes: timed out ({delivered} delivered, lag {lag})")
            time.sleep(0.5)
        elapsed = time.monotonic() - t0
        time.sleep(1.0)  # the writer's last flush
        writer.send_signal(signal.SIGINT)
        summary_text, writer_err = writer.communicate(timeout=60)
        sender_counts = {}
        for s, t in zip(senders, topics):
            s.send_signal(signal.SIGINT)
            s.communicate(timeout=30)
            sender_counts[t] = {k: key(f"{tag}.{t}", f"kafka.{t}.{k}") for k in ("sent", "delivered", "failed", "dropped", "lost")}
        audit = subprocess.run([weir, "audit", out, "--json"], capture_output=True, text=True)
        mib = a.boxes * a.blocks * a.block * 4 / 2**20
        print(f"{a.boxes} boxes x {a.blocks} blocks of {a.block} f32 at {a.rate:g} S/s each: {mib:.1f} MiB in {elapsed:.1f} s "
              f"({mib / elapsed:.2f} MiB/s recorded, written {a.boxes * a.rate * 4 / 2**20:.2f} MiB/s)")
        print(f"writer lag: max {lag_max} messages (sampled every 0.5 s), 0 at the end")
        print("senders:", json.dumps(sender_counts))
        print("audit (exit", audit.returncode, "):", audit.stdout.strip().splitlines()[-1] if audit.stdout.strip() else audit.stderr.strip())
        # Each box wrote its first block before its sender started (to make the channel): blocks + 1.
        summary = json.loads(summary_text.strip().splitlines()[-1])
        in_run = sum(r["blocks"] for r in summary["runs"])
        gap_rows = sum(r["gaps"] for r in summary["runs"])
        exact = (audit.returncode == 0 and in_run == a.boxes * (a.blocks + 1) and gap_rows == 0
                 and summary["late"] == 0 and summary["received"] == in_run
                 and all(c["delivered"] == a.blocks + 1 and c["failed"] == 0 and c["dropped"] == 0
                         for c in sender_counts.values()))
        print(f"in the run's files: {in_run} blocks of {a.boxes * (a.blocks + 1)} written, {gap_rows} gap rows, "
              f"{summary['late']} late, {summary['received']} received")
        print("ledger exact" if exact else "LEDGER NOT EXACT", writer_err.strip()[-500:] if not exact else "")
        return 0 if exact else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for t in [f"box{i}" for i in range(1, a.boxes + 1)]:
            subprocess.run([weir, "rm", f"{tag}.{t}"], capture_output=True)
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
