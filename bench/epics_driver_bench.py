#!/usr/bin/python3
"""driver "epics" figures (epics/README.md), against EPICS's own tools on the same softIoc:

- N scalar PVs (calc records counting at 10 Hz each: 20,000 updates/s for 2,000) monitored by
  `camonitor` alone, then by weir-epics under `weir run` (a driver and a recorder per --per-driver
  PVs, 500 by default): updates received, updates
  the driver counted and the recorder's PV log recorded, dropped; CPU per update of each (utime +
  stime from /proc/PID/stat over the measured window);
- one waveform PV of M elements posted at 10 Hz into a channel: frames published, frames recorded,
  frames lost (the ledger).

    bench/epics_driver_bench.py [--weir build/tools/weir] [--pvs 2000] [--seconds 10] [--repeat 3]
                                [--elements 100000] [--per-driver 500]

Needs EPICS_BASE (scripts/epics_base.sh) and WEIR_EPICS_PROGRAM or weir-epics beside weir.
Prints medians over the repeats and one JSON object last.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "chaos"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "epics"))  # its conftest first

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def counter_of(arena, part, key):
    from chaos import weir as run_weir
    r = run_weir("get", arena, f"{part}.{key}")
    try:
        return int(r.stdout.strip()) if r.returncode == 0 else 0
    except ValueError:
        return 0


def cpu_sum(pids):
    return sum(cpu_s(p) for p in pids)


def find_children(parent, name, arg=None):
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                text = f.read()
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if int(text.rsplit(")", 1)[1].split()[1]) == parent and argv and argv[0].endswith(name.encode()) and \
                (arg is None or (len(argv) > 1 and argv[1] == arg.encode())):
            found.append(int(entry.name))
    return found


def main():
    import conftest
    from chaos import Supervised, remove_arena
    from ledger_check import audit
    ap = argparse.ArgumentParser()
    ap.add_argument("--weir", default=os.environ.get("WEIR_CLI", "build/tools/weir"))
    ap.add_argument("--pvs", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--elements", type=int, default=100000)
    ap.add_argument("--per-driver", type=int, default=500, help="PVs per driver (and its recorder)")
    a = ap.parse_args()
    os.environ["WEIR_CLI"] = os.path.abspath(a.weir)
    os.environ.setdefault("WEIR_EPICS_PROGRAM", os.path.join(os.path.dirname(os.path.abspath(a.weir)), "weir-epics"))
    conftest.WEIR_EPICS = os.environ["WEIR_EPICS_PROGRAM"]
    conftest.require_epics = lambda: None
    work = tempfile.mkdtemp(prefix="weir-epics-bench-")
    port = conftest.free_port()
    p = f"B{port}:"
    db = "".join(f'record(calc, "{p}c{i}") {{ field(SCAN, ".1 second") field(CALC, "A+1") field(INPA, "{p}c{i} NPP") }}\n'
                 for i in range(a.pvs))
    db += f'record(waveform, "{p}wave") {{ field(SCAN, ".1 second") field(NELM, "{a.elements}") field(FTVL, "DOUBLE") }}\n'
    ioc = conftest.SoftIoc(db, work, port)
    ioc.env["EPICS_CA_MAX_ARRAY_BYTES"] = str(a.elements * 8 + 65536)
    ioc.start(probe_pv=f"{p}c0")
    env = ioc.env
    names = [f"{p}c{i}" for i in range(a.pvs)]
    results = {"camonitor": [], "weir": [], "waveform": []}
    try:
        for rep in range(a.repeat):
            # camonitor alone, its output counted
            out_path = os.path.join(work, "camonitor.out")
            with open(out_path, "w") as out:
                cam = subprocess.Popen([conftest.epics_bin("camonitor"), *names], env=env, stdout=out,
                                       stderr=subprocess.DEVNULL)
                time.sleep(3)  # connect and take the first values
                lines0, c0 = sum(1 for _ in open(out_path)), cpu_s(cam.pid)
                time.sleep(a.seconds)
                lines1, c1 = sum(1 for _ in open(out_path)), cpu_s(cam.pid)
                cam.send_signal(signal.SIGINT)
                cam.wait(10)
            n = lines1 - lines0
            results["camonitor"].append({"updates": n, "updates_per_s": n / a.seconds, "cpu_s": c1 - c0,
                                         "cpu_us_per_update": (c1 - c0) * 1e6 / max(n, 1)})
            # weir: the same PVs and the waveform, recorded
            arena = f"epb{os.getpid()}x{rep}"
            rec = os.path.join(work, f"rec{rep}")
            os.makedirs(rec)
            # PVs in groups of --per-driver, each group a driver with its PV log and a recorder of its own
            # (a recorder's flushes grow with the square of the NXlogs it keeps: epics/README.md, Limits).
            groups = [names[i:i + a.per_driver] for i in range(0, len(names), a.per_driver)]
            parts = []
            for g, group in enumerate(groups):
                pvs = ", ".join(f'"{n_}"' for n_ in group)
                wave = f', {{ pv = "{p}wave", channel = "bl0.wave", elements = {a.elements}, rate = 10 }}' if g == 0 else ""
                parts.append(f"""
driver "epics" {{ name = "bl{g}", log_block = 1024, log = "bl{g}.pvlog",
  pvs = {{ {pvs}{wave} }},
  ca = {{ addr_list = "127.0.0.1", auto_addr_list = false, server_port = {port}, repeater_port = {port + 1},
          max_array_bytes = {a.elements * 8 + 65536} }} }}
record "hdf5" {{ name = "rec{g}", channels = {{ "bl{g}.*" }}, out = "{rec}/g{g}", flush_ms = 500 }}
""")
            pipeline = os.path.join(work, f"bench{rep}.lua")
            with open(pipeline, "w") as f:
                f.write(f'arena {{ name = "{arena}", slots = {4 * a.pvs + 1024}, value_bytes = 1024, channels = {len(groups) + 4} }}\n')
                f.write("".join(parts))
            run = Supervised(pipeline)
            try:
                try:
                    conftest.wait_until("weir-epics to connect every PV",
                                        lambda: run.proc.poll() is not None or
                                        sum(counter_of(arena, f"bl{g}", "pvs_connected") for g in range(len(groups))) == a.pvs + 1,
                                        timeout_s=60)
                except AssertionError:
                    raise SystemExit(f"weir-epics did not connect every PV; weir run says:\n{run.output()[-3000:]}")
                if run.proc.poll() is not None:
                    raise SystemExit(f"weir run exited:\n{run.output()[-3000:]}")
                drivers = find_children(run.proc.pid, "weir-epics")
                recorders = find_children(run.proc.pid, "weir", "record")
                time.sleep(2)

                def counter(k):
                    return sum(counter_of(arena, f"bl{g}", k) for g in range(len(groups)))
                u0, c0, r0 = counter("updates"), cpu_sum(drivers), cpu_sum(recorders)
                time.sleep(a.seconds)
                u1, c1, r1 = counter("updates"), cpu_sum(drivers), cpu_sum(recorders)
                dropped = counter("dropped")
            finally:
                rc = run.stop()
                run.close()
            n = u1 - u0
            by, rc_a = {}, 0
            for g in range(len(groups)):
                rc_g, channels, _, text = audit(os.path.join(rec, f"g{g}"))
                rc_a = max(rc_a, rc_g)
                by.update({c["channel"]: c for c in channels})
            logs = [c for name, c in by.items() if name.endswith(".pvlog")]
            log = {"recorded": sum(c.get("recorded", 0) for c in logs), "lost": sum(c.get("lost", 0) for c in logs)}
            wave = by.get("bl0.wave", {})
            results["weir"].append({"updates": n, "updates_per_s": n / a.seconds, "cpu_s": c1 - c0,
                                    "cpu_us_per_update": (c1 - c0) * 1e6 / max(n, 1), "dropped": dropped,
                                    "recorder_cpu_us_per_update": (r1 - r0) * 1e6 / max(n, 1),
                                    "log_blocks_recorded": log.get("recorded"), "log_blocks_lost": log.get("lost"),
                                    "audit_exit": rc_a, "weir_run_exit": rc})
            results["waveform"].append({"frames_written": wave.get("written"), "frames_recorded": wave.get("recorded"),
                                        "frames_lost": wave.get("lost")})
            print(json.dumps({"repeat": rep, "camonitor": results["camonitor"][-1], "weir": results["weir"][-1],
                              "waveform": results["waveform"][-1]}), flush=True)
            remove_arena(arena)
    finally:
        ioc.stop()

    def med(rows, k):
        vals = [r[k] for r in rows if r.get(k) is not None]
        return statistics.median(vals) if vals else None
    summary = {
        "pvs": a.pvs, "seconds": a.seconds, "repeat": a.repeat, "waveform_elements": a.elements,
        "camonitor_updates_per_s": med(results["camonitor"], "updates_per_s"),
        "camonitor_cpu_us_per_update": med(results["camonitor"], "cpu_us_per_update"),
        "weir_updates_per_s": med(results["weir"], "updates_per_s"),
        "weir_cpu_us_per_update": med(results["weir"], "cpu_us_per_update"),
        "recorder_cpu_us_per_update": med(results["weir"], "recorder_cpu_us_per_update"),
        "weir_dropped": max(r["dropped"] for r in results["weir"]),
        "waveform_frames_lost": max((r["frames_lost"] or 0) for r in results["waveform"]),
    }
    if summary["camonitor_cpu_us_per_update"] and summary["weir_cpu_us_per_update"]:
        summary["cpu_ratio_weir_to_camonitor"] = summary["weir_cpu_us_per_update"] / summary["camonitor_cpu_us_per_update"]
    print(f"camonitor: {summary['camonitor_updates_per_s']:.0f} updates/s, {summary['camonitor_cpu_us_per_update']:.2f} us CPU/update")
    print(f"weir-epics (recorded): {summary['weir_updates_per_s']:.0f} updates/s, {summary['weir_cpu_us_per_update']:.2f} us "
          f"CPU/update (the recorder {summary['recorder_cpu_us_per_update']:.2f} us), {summary['weir_dropped']} dropped; "
          f"waveform frames lost {summary['waveform_frames_lost']}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
