#!/usr/bin/python3
"""epics "serve" figures (epics/ioc/README.md): weir serving N keys as PVs to M monitoring clients.

A `weir run` of a pipeline with an arena and an epics "serve" part serving N f64 keys (ai records).
A writer process (weir's Python binding, python/weir) sets every key to the wall-clock time of its
write, HZ times a second on absolute deadlines. M `camonitor` processes (EPICS base) each monitor all
N PVs, stamping each update with the client's own clock when its callback runs (`-tc`) into a file.
Reported over the measured window: updates delivered (against N x M x HZ x seconds), the CPU of
weir-epics (utime + stime from /proc/PID/stat), and the latency from the arena write to the client
callback (client stamp minus the value written), p50/p99/max. Each client's first update of a PV
(its connection) is left out.

    /usr/bin/python3 bench/epics_serve_bench.py [--build build] [--pvs 1000] [--clients 10] [--hz 10]
                                                [--update-hz 10] [--seconds 15]

Needs EPICS_BASE (scripts/epics_base.sh), weir-epics beside weir, and the C library (target weir_c)
for the writer. Prints a summary and one JSON object last.
"""
import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "epics"))
sys.path.insert(0, HERE)
from serve_bench_common import KEY_WRITER, child_of, cpu_s, percentile, writer_ticks  # noqa: E402



def parse_camonitor(path, since):
    """Latencies (s) of the updates in one camonitor -tc file (client stamps in parentheses) after each
    PV's first, received after `since`."""
    seen, latencies, updates = set(), [], 0
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            name = parts[0]
            if name not in seen:  # the update a connection brings
                seen.add(name)
                continue
            try:
                stamp = datetime.datetime.strptime((parts[1] + " " + parts[2]).strip("()"), "%Y-%m-%d %H:%M:%S.%f").timestamp()
                value = float(parts[3])
            except ValueError:
                continue
            if stamp < since:
                continue
            updates += 1
            latencies.append(stamp - value)
    return updates, latencies


def main():
    import conftest
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("WEIR_BUILD_DIR", "build"))
    ap.add_argument("--pvs", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--hz", type=float, default=10, help="how often the writer changes every key")
    ap.add_argument("--update-hz", type=float, default=10, help="the serve part's update_hz")
    ap.add_argument("--seconds", type=float, default=15, help="the measured window")
    a = ap.parse_args()
    weir = os.path.join(a.build, "tools", "weir")
    libweir = next((os.path.join(a.build, d, f) for d in ("capi", "python/weir", "lib")
                    for f in ("libweir.so.1", "libweir.so") if os.path.exists(os.path.join(a.build, d, f))), None)
    if not conftest.EPICS_BASE or not os.access(conftest.epics_bin("camonitor"), os.X_OK):
        sys.exit("needs EPICS_BASE with camonitor (scripts/epics_base.sh)")
    if libweir is None:
        sys.exit(f"needs weir's C library for the writer: cmake --build {a.build} --target weir_c")

    work = tempfile.mkdtemp(prefix="weir-epics-bench-")
    arena = f"epbench{os.getpid()}"
    port = conftest.free_port()
    env = conftest.ca_env(port)
    prefix = f"B{os.getpid()}:"
    keys = ", ".join(f'"bench.k{i:04d}"' for i in range(a.pvs))
    pipeline = os.path.join(work, "bench.lua")
    with open(pipeline, "w") as f:
        f.write(f'arena {{ name = "{arena}", slots = {max(4096, 4 * a.pvs)}, channels = 2, channel_mb = 1 }}\n'
                f'epics "serve" {{ prefix = "{prefix}", keys = {{ {keys} }}, status = false, run_control = false, '
                f'update_hz = {a.update_hz}, server_port = {port}, pva = false }}\n')
    log = open(os.path.join(work, "run.log"), "w")
    run = subprocess.Popen([weir, "run", pipeline, "--status-every", "0"], env=env, stdout=log,
                           stderr=subprocess.STDOUT, start_new_session=True)
    procs, monitors = [], []
    try:
        conftest.wait_until("weir-epics to serve the keys",
                            lambda: conftest.caget(env, f"{prefix}bench:k0000", "-t", timeout_s=1) is not None, 60)
        server = conftest.wait_until("weir-epics's pid", lambda: child_of(run.pid, "weir-epics"), 10)
        writer_env = {**env, "WEIR_LIBRARY": libweir}
        total_s = a.seconds + 8  # clients connect, then the measured window
        writer = subprocess.Popen([sys.executable, "-c", KEY_WRITER, os.path.join(HERE, "..", "python"), arena, str(a.pvs),
                                   str(a.hz), str(total_s)], env=writer_env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        procs.append(writer)
        names = [f"{prefix}bench:k{i:04d}" for i in range(a.pvs)]
        for c in range(a.clients):
            out = open(os.path.join(work, f"client{c}.txt"), "w")
            monitors.append((subprocess.Popen([conftest.epics_bin("camonitor"), "-tc", "-f", "6", *names], env=env,
                                              stdout=out, stderr=subprocess.DEVNULL), out))
        def connected():  # every client has every PV's first update
            counts = []
            for c in range(a.clients):
                with open(os.path.join(work, f"client{c}.txt"), "rb") as f:
                    counts.append(f.read().count(b"\n"))
            return min(counts) >= a.pvs
        conftest.wait_until(f"{a.clients} clients to connect {a.pvs} PVs each", connected, 60, 0.2)
        since, cpu0 = time.time(), cpu_s(server)
        time.sleep(a.seconds)
        until, cpu1 = time.time(), cpu_s(server)
        for p, out in monitors:
            p.send_signal(signal.SIGINT)
        for p, out in monitors:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
            out.close()
        writer.wait(total_s + 30)
        writer_out = writer.stdout.read()
    finally:
        for p, _ in monitors:
            if p.poll() is None:
                p.kill()
        for p in procs:
            if p.poll() is None:
                p.kill()
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            try:
                run.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
        log.close()
        subprocess.run([weir, "rm", arena, "--force"], capture_output=True)

    window = until - since
    # The server's own count (ServeReport): record updates it posted over its whole life, against the
    # writes the writer made: what the polling at update_hz merged before Channel Access saw anything.
    posted = None
    with open(os.path.join(work, "run.log"), errors="replace") as f:
        for line in f:
            m = re.search(r"epics serve: ([\d.]+) s, (\d+) records, (\d+) updates posted", line)
            if m:
                posted = int(m.group(3))
    writes = None
    if ticks := writer_ticks(writer_out):
        writes = ticks[-1][1] * a.pvs
    updates, latencies = 0, []
    for c in range(a.clients):
        n, lat = parse_camonitor(os.path.join(work, f"client{c}.txt"), since)
        # Updates received after the window closed are left out of the count, not of the latencies.
        updates += n
        latencies += lat
    latencies.sort()
    expected = a.pvs * a.clients * a.hz * window
    result = {
        "pvs": a.pvs, "clients": a.clients, "write_hz": a.hz, "update_hz": a.update_hz, "window_s": round(window, 2),
        "updates_delivered": updates, "updates_expected": round(expected), "delivered_ratio": round(updates / expected, 4),
        "updates_per_s": round(updates / window),
        "weir_epics_cpu_s": round(cpu1 - cpu0, 2), "weir_epics_cpu_pct_of_core": round(100 * (cpu1 - cpu0) / window, 1),
        "cpu_us_per_update": round(1e6 * (cpu1 - cpu0) / max(updates, 1), 2),
        "latency_ms_p50": round(1e3 * percentile(latencies, 0.50), 2),
        "latency_ms_p99": round(1e3 * percentile(latencies, 0.99), 2),
        "latency_ms_max": round(1e3 * latencies[-1], 2) if latencies else None,
        "key_writes": writes, "server_updates_posted": posted,
        "cpus": os.cpu_count(),
    }
    print(f"{a.pvs} PVs x {a.clients} camonitor clients, keys written at {a.hz} Hz, update_hz {a.update_hz}, "
          f"{window:.1f} s window:")
    print(f"  updates delivered {updates} of {expected:.0f} ({100 * updates / expected:.1f} %), {updates / window:.0f}/s")
    print(f"  the writer made {writes} key writes; the server posted {posted} record updates (all PVs, whole run)")
    print(f"  weir-epics CPU {cpu1 - cpu0:.2f} s ({100 * (cpu1 - cpu0) / window:.1f} % of a core), "
          f"{result['cpu_us_per_update']} us per update delivered")
    print(f"  latency arena write -> client callback: p50 {result['latency_ms_p50']} ms, "
          f"p99 {result['latency_ms_p99']} ms, max {result['latency_ms_max']} ms")
    print(json.dumps(result))
    if os.environ.get("WEIR_BENCH_KEEP") is None:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
