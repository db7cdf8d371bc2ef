#!/usr/bin/python3
"""tango "serve" figures (tango/server/README.md): weir pushing change events of N key attributes to M
subscribed clients.

A `weir run` of a pipeline with an arena and a tango "serve" part (no database: -nodb -dlist on a
loopback port) serving N f64 keys as attributes (abs_change 0: every change is an event). A writer
process (weir's Python binding, python/weir) sets every key to the wall-clock time of its write, HZ
times a second on absolute deadlines. M client processes (Debian's python3-tango) each subscribe to
change events of all N attributes into libtango's event queues, which stamp each event as it
arrives. Reported over the measured
window: events delivered (against N x M x HZ x seconds), the CPU of weir-tango and of the clients
(utime + stime from /proc/PID/stat), and the latency from the arena write to the client's callback
(libtango's reception stamp minus the value written), p50/p99/max.

    /usr/bin/python3 bench/tango_serve_bench.py [--build build] [--attrs 1000] [--clients 5] [--hz 10]
                                                [--update-hz 10] [--seconds 15]

Needs weir-tango beside weir and the C library (target weir_c) for the writer. Prints a summary and
one JSON object last.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from serve_bench_common import KEY_WRITER, child_of, cpu_s, percentile, writer_ticks  # noqa: E402


# One client: subscribes to every attribute, then counts the events and their latencies (libtango's
# reception stamp minus the value written) between the times it reads from "window" (start and end,
# wall clock, written by the bench when all are subscribed).
CLIENT = r"""
import json, os, sys, time
import tango
url, n, window_file, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
p = tango.DeviceProxy(url)
p.set_timeout_millis(20000)
# Events into libtango's own queues (no Python callback on its threads: PyTango 9.3 crashed with
# callbacks under thousands of events a second), each stamped by libtango when it arrived.
ids = [p.subscribe_event(f"bench_k{i:04d}", tango.EventType.CHANGE_EVENT, 1000) for i in range(n)]
print("SUBSCRIBED", flush=True)
events, errors = [], {}
def drain():
    for i in ids:
        for ev in p.get_events(i):
            if ev.err:
                reason = ev.errors[0].reason
                errors[reason] = errors.get(reason, 0) + 1
            elif ev.attr_value is not None and ev.attr_value.value is not None:
                events.append((ev.reception_date.totime(), ev.attr_value.value))
while True:
    drain()
    if os.path.exists(window_file):
        text = open(window_file).read().split()
        if len(text) == 2:
            break
    time.sleep(0.05)
since, until = map(float, text)
while time.time() < until + 1.0:
    drain()
    time.sleep(0.05)
drain()
kept = [(t, t - v) for t, v in events if since <= t < until]
with open(out, "w") as f:
    per_s = {}
    for t, _ in kept:
        per_s[int(t - since)] = per_s.get(int(t - since), 0) + 1
    json.dump({"events": len(kept), "latencies": [l for _, l in kept], "errors": errors, "per_s": per_s}, f)
os._exit(0)  # no unsubscribing: PyTango 9.3 can crash unsubscribing while events arrive
"""


def wait_until(what, predicate, timeout_s, every_s=0.1):
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as e:  # noqa: BLE001 - not up yet: polled again
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every_s)
    raise SystemExit(f"timed out after {timeout_s} s waiting for {what}; last seen: {last!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("WEIR_BUILD_DIR", "build"))
    ap.add_argument("--attrs", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--hz", type=float, default=10, help="how often the writer changes every key")
    ap.add_argument("--update-hz", type=float, default=10, help="the serve part's update_hz")
    ap.add_argument("--seconds", type=float, default=15, help="the measured window")
    a = ap.parse_args()
    weir = os.path.join(a.build, "tools", "weir")
    if not os.access(os.path.join(a.build, "tools", "weir-tango"), os.X_OK):
        sys.exit(f"needs weir-tango in {a.build}/tools (a build with libtango-dev)")
    libweir = next((os.path.join(a.build, d, f) for d in ("capi", "python/weir", "lib")
                    for f in ("libweir.so.1", "libweir.so") if os.path.exists(os.path.join(a.build, d, f))), None)
    if libweir is None:
        sys.exit(f"needs weir's C library for the writer: cmake --build {a.build} --target weir_c")

    work = tempfile.mkdtemp(prefix="weir-tango-bench-")
    arena = f"tgbench{os.getpid()}"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    device = f"weir/bench/{os.getpid()}"
    url = f"tango://127.0.0.1:{port}/{device}#dbase=no"
    keys = ", ".join(f'"bench.k{i:04d}"' for i in range(a.attrs))
    pipeline = os.path.join(work, "bench.lua")
    with open(pipeline, "w") as f:
        f.write(f'arena {{ name = "{arena}", slots = {max(4096, 4 * a.attrs)}, channels = 2, channel_mb = 1 }}\n'
                f'tango "serve" {{ device = "{device}", database = "none", host = "127.0.0.1", port = {port}, '
                f'keys = {{ {keys} }}, status = false, run_control = false, update_hz = {a.update_hz} }}\n')
    log = open(os.path.join(work, "run.log"), "w")
    env = {**os.environ, "WEIR_LIBRARY": libweir}
    run = subprocess.Popen([weir, "run", pipeline, "--status-every", "0"], stdout=log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    procs, clients = [], []
    window_file = os.path.join(work, "window")
    try:
        # The keys exist once written: the writer starts first, the clients subscribe to valid values.
        server = wait_until("weir-tango's pid", lambda: child_of(run.pid, "weir-tango"), 60)
        total_s = a.seconds + 120  # clients subscribe, then the measured window; stopped below
        writer = subprocess.Popen([sys.executable, "-c", KEY_WRITER, os.path.join(HERE, "..", "python"), arena, str(a.attrs),
                                   str(a.hz), str(total_s)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        procs.append(writer)
        import tango
        wait_until("the device to serve the keys",
                   lambda: tango.DeviceProxy(url).read_attribute("bench_k0000").quality == tango.AttrQuality.ATTR_VALID, 60)
        for c in range(a.clients):
            clients.append(subprocess.Popen([sys.executable, "-c", CLIENT, url, str(a.attrs), window_file,
                                             os.path.join(work, f"client{c}.json")], stdout=subprocess.PIPE, text=True))
        for c in clients:
            if c.stdout.readline().strip() != "SUBSCRIBED":
                raise SystemExit("a client did not subscribe")
        time.sleep(2)  # the subscriptions' own reads are past
        since = time.time()
        cpu0 = cpu_s(server)
        ccpu0 = sum(cpu_s(c.pid) for c in clients)
        time.sleep(a.seconds)
        until = time.time()
        cpu1 = cpu_s(server)
        ccpu1 = sum(cpu_s(c.pid) for c in clients)
        with open(window_file + ".tmp", "w") as f:
            f.write(f"{since} {until}")
        os.rename(window_file + ".tmp", window_file)
        for i, c in enumerate(clients):
            if c.wait(120) != 0:
                raise SystemExit(f"client {i} exited with {c.returncode}")
        writer.kill()
        writer_out = writer.stdout.read()
    finally:
        for p in procs + clients:
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
    ticks = writer_ticks(writer_out)
    in_window = [n for t, n in ticks if since <= t < until]
    writes = (max(in_window) - min(in_window) + 1) * a.attrs if in_window else 0
    # The server's own count (ServeReport, whole run) against the writer's writes: what the polling at
    # update_hz merged before any event left, and what the transport lost after.
    pushed = None
    with open(os.path.join(work, "run.log"), errors="replace") as f:
        for line in f:
            if m := re.search(r"tango serve: ([\d.]+) s, (\d+) attributes, (\d+) events pushed", line):
                pushed = int(m.group(3))
    delivered, latencies, errors = 0, [], {}
    for c in range(a.clients):
        with open(os.path.join(work, f"client{c}.json")) as f:
            r = json.load(f)
        delivered += r["events"]
        latencies += r["latencies"]
        if os.environ.get("WEIR_BENCH_PER_S"):
            print(f"client {c} events per second of the window: {r['per_s']}")
        for reason, n in r["errors"].items():
            errors[reason] = errors.get(reason, 0) + n
    latencies.sort()
    expected = a.attrs * a.clients * a.hz * window
    result = {
        "attributes": a.attrs, "clients": a.clients, "write_hz": a.hz, "update_hz": a.update_hz,
        "window_s": round(window, 2), "events_delivered": delivered, "events_expected": round(expected),
        "delivered_ratio": round(delivered / expected, 4), "events_per_s": round(delivered / window),
        "weir_tango_cpu_pct_of_core": round(100 * (cpu1 - cpu0) / window, 1),
        "cpu_us_per_event": round(1e6 * (cpu1 - cpu0) / max(delivered, 1), 2),
        "clients_cpu_pct_of_core": round(100 * (ccpu1 - ccpu0) / window, 1),
        "latency_ms_p50": round(1e3 * percentile(latencies, 0.50), 2),
        "latency_ms_p99": round(1e3 * percentile(latencies, 0.99), 2),
        "latency_ms_max": round(1e3 * latencies[-1], 2) if latencies else None,
        "client_errors": errors, "key_writes_in_window": writes, "events_pushed_whole_run": pushed, "cpus": os.cpu_count(),
    }
    print(f"{a.attrs} attributes x {a.clients} subscribed clients, keys written at {a.hz} Hz, update_hz {a.update_hz}, "
          f"{window:.1f} s window:")
    print(f"  events delivered {delivered} of {expected:.0f} ({100 * delivered / expected:.1f} %), {delivered / window:.0f}/s")
    print(f"  weir-tango CPU {100 * (cpu1 - cpu0) / window:.1f} % of a core, {result['cpu_us_per_event']} us per event "
          f"delivered; the clients {result['clients_cpu_pct_of_core']} % of a core")
    print(f"  latency arena write -> client callback: p50 {result['latency_ms_p50']} ms, "
          f"p99 {result['latency_ms_p99']} ms, max {result['latency_ms_max']} ms")
    print(f"  error events at the clients (whole run): {errors or 'none'}")
    print(f"  the writer made {writes} key writes in the window ({writes / window:.0f}/s)")
    print(f"  the server pushed {pushed} change and archive events over the whole run (to every subscriber)")
    print(json.dumps(result))
    if os.environ.get("WEIR_BENCH_KEEP") is None:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
