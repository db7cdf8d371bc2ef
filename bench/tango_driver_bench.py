"""driver "tango" at a known event rate: PyTango devices (tests/tango/driver_fixtures.py) push change
events of ATTRS scalar attributes each at RATE Hz; one weir-tango driver subscribes to all of them for
SECONDS. Prints what the devices pushed while the driver was subscribed, what the driver counted
(updates, dropped), and the driver's CPU time per update (utime + stime from /proc).

  WEIR_CLI=build/tools/weir WEIR_TANGO_PROGRAM=build/tools/weir-tango \
    /usr/bin/python3 bench/tango_driver_bench.py [--devices 4] [--attrs 10] [--rate 250] [--seconds 20] [--database]

--database registers the devices in a private Tango database (tests/tango/tango_database.py: MariaDB and
DataBaseds) and the driver finds them through it, as on a facility. Without it the devices run with
-nodb, and libtango 9.3 clients lose a -nodb server's heartbeat: every subscription gets API_EventTimeout
12 s after it starts (tango/server/src/nodb_heartbeat.cpp), so keep such windows under 10 s."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tango"))
from driver_fixtures import WEIR_TANGO, event_device, read_pushes, wait_until  # noqa: E402
from tango_database import TangoDatabase  # noqa: E402

WEIR = os.environ.get("WEIR_CLI", "weir")


def get(arena, key):
    r = subprocess.run([WEIR, "get", arena, key], capture_output=True, text=True)
    try:
        return int(float(r.stdout.strip()))
    except ValueError:
        return 0


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--attrs", type=int, default=10)
    ap.add_argument("--rate", type=float, default=250)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--database", action="store_true", help="devices and driver through a private Tango database")
    a = ap.parse_args()
    if a.database:
        if not TangoDatabase.available():
            sys.exit("--database needs mariadb-server and tango-db (scripts/deps.sh test)")
        with TangoDatabase() as db:
            bench(a, db)
    else:
        bench(a, None)


def bench(a, db):
    work = tempfile.mkdtemp(prefix="weir-tango-bench-")
    devs, run = [], None
    arena = f"tgbench{os.getpid()}"
    try:
        for i in range(a.devices):
            d = os.path.join(work, f"d{i}")
            os.makedirs(d)
            if db is not None:
                db.add_server(f"event_device/evdev{i + 1}", "EventDevice", [f"test/evt/{i + 1}"])
            devs.append(event_device(d, a.rate, device=f"test/evt/{i + 1}", attrs=a.attrs, instance=f"evdev{i + 1}",
                                     tango_host=db.tango_host if db is not None else None).start())
        attrs = []
        for i, d in enumerate(devs):
            names = ["value"] + [f"value{k}" for k in range(1, a.attrs)]
            where = f"tango://{db.tango_host}" if db is not None else f"tango://127.0.0.1:{d.port}"
            attrs += [f'"{where}/test/evt/{i + 1}/{n}{"" if db is not None else "#dbase=no"}"' for n in names]
        path = os.path.join(work, "bench.lua")
        with open(path, "w") as f:
            f.write(f'arena {{ name = "{arena}", slots = 1024 }}\n'
                    f'driver "tango" {{ name = "tb", attributes = {{ {", ".join(attrs)} }} }}\n')
        subprocess.run([WEIR, "create", arena], check=True, capture_output=True)
        run = subprocess.Popen([WEIR_TANGO, "driver", arena, "--pipeline", path, "--part", "tb", "--json"],
                               stdout=subprocess.PIPE, text=True)
        wait_until("all attributes connected", lambda: get(arena, "tb.pvs_connected") == len(attrs) or run.poll() is not None, timeout_s=60)
        assert run.poll() is None, "weir-tango exited"
        n0 = [len(read_pushes(d.pushes)[0]) for d in devs]
        u0, c0, t0 = get(arena, "tb.updates"), cpu_s(run.pid), time.monotonic()
        time.sleep(a.seconds)  # the measured interval
        n1 = [len(read_pushes(d.pushes)[0]) for d in devs]
        c1, t1 = cpu_s(run.pid), time.monotonic()
        for d in devs:
            d.kill()  # no pushes after this; the driver drains what it has
        time.sleep(1.0)
        u1 = get(arena, "tb.updates")
        dropped = get(arena, "tb.dropped")
        run.terminate()
        report = run.communicate(timeout=30)[0].strip()
        pushed_total = sum(len(read_pushes(d.pushes)[0]) for d in devs) * a.attrs
        pushed_window = sum(b - x for b, x in zip(n1, n0)) * a.attrs
        updates = u1 - u0
        print(f"{a.devices} devices x {a.attrs} attributes at {a.rate} Hz: {pushed_window / (t1 - t0):.0f} updates/s pushed")
        print(f"pushed after subscription (all): {pushed_total}, the driver's updates (all): {u1}")
        print(f"window: pushed {pushed_window}, driver updates {updates}, dropped {dropped}")
        print(f"driver CPU: {c1 - c0:.2f} s over {t1 - t0:.1f} s = {100 * (c1 - c0) / (t1 - t0):.1f} % of a core, "
              f"{1e6 * (c1 - c0) / max(1, pushed_window):.2f} us per update")
        print(report)
    finally:
        if run and run.poll() is None:
            run.kill()
        for d in devs:
            d.kill()
        subprocess.run([WEIR, "rm", arena], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
