#!/usr/bin/python3
"""SCPI instrument driver figures against the fake instrument (tests/acquisition/instrument/fake_scpi.py).

1. Queries per second: `weir scpi` with one query due all the time (every = 1 us) for --seconds,
   replies / elapsed from its --json report, against the floor measured in the same run: a bare
   blocking query loop (send "MEAS:VOLT?\\n", read to "\\n") on one TCP connection to the same
   fake instrument for the same time. The fake instrument (one Python process) is the limit of
   both; the ratio is the driver's cost on top of the line.
2. Recovery: with a query every 10 ms, the fake instrument drops every connection (FAKE:KICK);
   it reports the time from the drop to the first query it answers on the new connection
   (FAKE:RECOVERED?), i.e. detect + back-off wait + connect + init + query. Measured with the
   default back-off start (reconnect_min_ms = 100) and with 10 ms.

Prints one line per figure with the median (and range) of --reps runs, and --json for scripts.
Usage: bench/scpi_bench.py [--weir build/tools/weir] [--reps 5] [--seconds 3] [--json]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "..", "tests", "acquisition", "instrument", "fake_scpi.py")


class Fake:
    def __init__(self, tmp):
        port_file = os.path.join(tmp, "fake.port")
        self.proc = subprocess.Popen(["/usr/bin/python3", FAKE, "--port-file", port_file],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            if time.monotonic() > deadline:
                raise RuntimeError("the fake instrument did not start")
            time.sleep(0.01)
        self.port = int(open(port_file).read())

    def ask(self, line):
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall((line + "\n").encode())
            if not line.endswith("?"):
                s.sendall(b"*OPC?\n")
            data = b""
            while b"\n" not in data:
                chunk = s.recv(256)
                if not chunk:
                    break
                data += chunk
            return data.split(b"\n", 1)[0].decode()

    def close(self):
        self.proc.kill()
        self.proc.wait()


def bare_loop(port, seconds):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        n = 0
        buf = b""
        end = time.monotonic() + seconds
        start = time.monotonic()
        while time.monotonic() < end:
            s.sendall(b"MEAS:VOLT?\n")
            while b"\n" not in buf:
                buf += s.recv(4096)
            buf = buf.split(b"\n", 1)[1]
            n += 1
        return n / (time.monotonic() - start)


def pipeline(tmp, arena, port, every, reconnect_min_ms):
    path = os.path.join(tmp, "bench.lua")
    with open(path, "w") as f:
        f.write('arena { name = "%s", slots = 256, channels = 2, channel_mb = 1 }\n' % arena)
        f.write('driver "scpi" { name = "dmm", host = "127.0.0.1", port = %d, timeout_ms = 1000,\n' % port)
        f.write('  reconnect_min_ms = %g, queries = { {send = "MEAS:VOLT?", every = %g, key = "dmm.volt"} } }\n'
                % (reconnect_min_ms, every))
    return path


def weir(args, exe, **kw):
    return subprocess.run([exe] + args, check=True, capture_output=True, text=True, **kw)


def qps_run(exe, tmp, fake, seconds):
    arena = "scpibench%d" % os.getpid()
    weir(["create", arena, "--replace"], exe)
    try:
        path = pipeline(tmp, arena, fake.port, 1e-6, 100)
        floor = bare_loop(fake.port, seconds)
        out = weir(["scpi", arena, "--pipeline", path, "--part", "dmm", "--duration", str(seconds), "--json"], exe)
        report = json.loads(out.stdout)
        return report["replies"] / report["elapsed_s"], floor
    finally:
        subprocess.run([exe, "rm", arena, "--force"], capture_output=True)


def recovery_run(exe, tmp, fake, reconnect_min_ms):
    arena = "scpibench%d" % os.getpid()
    weir(["create", arena, "--replace"], exe)
    path = pipeline(tmp, arena, fake.port, 0.01, reconnect_min_ms)
    before = int(fake.ask("FAKE:COUNT?"))
    driver = subprocess.Popen([exe, "scpi", arena, "--pipeline", path, "--part", "dmm"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while int(fake.ask("FAKE:COUNT?")) < before + 5:  # this driver connected and answering
            if time.monotonic() > deadline:
                raise RuntimeError("the driver never got going")
            time.sleep(0.02)
        fake.ask("FAKE:KICK")
        deadline = time.monotonic() + 30
        while True:
            ms = float(fake.ask("FAKE:RECOVERED?"))
            if ms >= 0:
                return ms
            if time.monotonic() > deadline:
                raise RuntimeError("no recovery within 30 s")
            time.sleep(0.02)
    finally:
        driver.terminate()
        driver.wait(timeout=30)
        subprocess.run([exe, "rm", arena, "--force"], capture_output=True)


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weir", default=os.path.join(HERE, "..", "build", "tools", "weir"))
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="weir-scpi-bench-") as tmp:
        fake = Fake(tmp)
        try:
            qps, floor, ratio = [], [], []
            for _ in range(args.reps):
                q, f = qps_run(args.weir, tmp, fake, args.seconds)
                qps.append(q)
                floor.append(f)
                ratio.append(q / f)
            results["queries_per_s"] = summary(qps)
            results["bare_loop_queries_per_s"] = summary(floor)
            results["ratio"] = summary(ratio)
            for backoff in (100, 10):
                results["recovery_ms_backoff_%d_ms" % backoff] = summary(
                    [recovery_run(args.weir, tmp, fake, backoff) for _ in range(args.reps)])
        finally:
            fake.close()
    if args.json:
        print(json.dumps(results))
        return
    r = results
    print("queries/s: weir scpi %.0f (%.0f-%.0f), bare loop %.0f (%.0f-%.0f), ratio %.2f (%.2f-%.2f)" % (
        r["queries_per_s"]["median"], r["queries_per_s"]["min"], r["queries_per_s"]["max"],
        r["bare_loop_queries_per_s"]["median"], r["bare_loop_queries_per_s"]["min"], r["bare_loop_queries_per_s"]["max"],
        r["ratio"]["median"], r["ratio"]["min"], r["ratio"]["max"]))
    for backoff in (100, 10):
        s = r["recovery_ms_backoff_%d_ms" % backoff]
        print("drop to first reply again, reconnect_min_ms = %d: %.1f ms (%.1f-%.1f)" % (backoff, s["median"], s["min"], s["max"]))


if __name__ == "__main__":
    sys.exit(main())
