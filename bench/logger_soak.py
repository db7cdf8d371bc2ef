#!/usr/bin/python3
"""A week of an unattended logger in an hour: a `weir run` recording into a small disk (a tmpfs the bench
mounts) at a rate that fills it many times over, with retention (`keep`), a hand-off command per closed
file, controlled runs started and stopped every --run-s, and the recorder killed (SIGKILL) every --kill-s
(weir run restarts it). Sampled every --sample-s: RSS and open files of weir run and each of its parts,
free space, files on the disk. At the end: the slope of RSS and open files (linear fit, per hour, over
the second half, after warm-up), files written, handed over and deleted, the audit of every run
(`weir audit --all-runs`, `--verify`), the smallest free space seen against the floor, alarms fired
(the recorder's retention_blocked key). Prints a summary and one JSON object last.

    /usr/bin/python3 bench/logger_soak.py [--minutes 60] [--disk-mb 256] [--rate 65536] [--channels 4]
                                          [--rotate-mb 8] [--floor-mb 48] [--run-s 60] [--kill-s 420]

Needs root (the tmpfs mount) and weir built (WEIR_CLI, default build/tools/weir).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "chaos"))
from chaos import MountRefused, parts_of, tmpfs  # noqa: E402

WEIR = os.environ.get("WEIR_CLI", str(HERE.parent / "build" / "tools" / "weir"))


def weir(*args, timeout=120):
    return subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def proc_sample(pid):
    """(rss_kib, open_files) of a live process, or None."""
    try:
        rss = 0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def slope_per_hour(points):
    """Least-squares slope of (t_s, y) points, per hour; 0 with fewer than 3."""
    if len(points) < 3:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return 0.0 if den == 0 else sum((t - mt) * (y - my) for t, y in points) / den * 3600


def key(arena, name):
    r = weir("get", arena, name)
    try:
        return float(r.stdout.strip())
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--disk-mb", type=int, default=256)
    ap.add_argument("--rate", type=float, default=65536, help="samples/s per channel (f32)")
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--rotate-mb", type=float, default=8)
    ap.add_argument("--floor-mb", type=float, default=48, help="keep's free space floor")
    ap.add_argument("--run-s", type=float, default=60, help="a controlled run's length")
    ap.add_argument("--kill-s", type=float, default=420, help="the recorder is killed about this often")
    ap.add_argument("--sample-s", type=float, default=10)
    a = ap.parse_args()
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="weir-soak-"))
    disk = work / "disk"
    arena = f"soak{os.getpid()}"
    handed = work / "handed.log"
    names = [f"adc{i}" for i in range(a.channels)]
    chans = "\n".join(f'channel "{n}" {{ dtype = "f32", rate = {a.rate:.0f}, block = 4096, ring = 256 }}' for n in names)
    pipeline = work / "logger.lua"
    pipeline.write_text(f"""
arena {{ name = "{arena}", channels = {a.channels + 2}, channel_mb = 32, consumers = 16, runs = "controlled" }}
{chans}
driver "sim" {{ channels = {{ {", ".join(f'"{n}"' for n in names)} }}, signal = "sine", frequency = 50 }}
record "hdf5" {{ channels = {{ "adc*" }}, out = "{disk / 'data'}", flush_ms = 500, rotate_mb = {a.rotate_mb},
  on_close = {{ "/bin/sh", "-c", "cat \\"$1\\" > /dev/null && echo \\"$1\\" >> {handed}", "handoff", "{{path}}" }},
  keep = {{ free_gib = {a.floor_mb / 1024:.6f}, after = "handed_over" }} }}
""")
    samples, events = [], []
    started = time.monotonic()
    try:
        with tmpfs(disk, a.disk_mb):
            (disk / "data").mkdir()
            log = open(work / "run.log", "w")
            run = subprocess.Popen([WEIR, "run", str(pipeline), "--status-every", "0"], stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
            deadline = started + a.minutes * 60
            next_run, next_kill, next_sample = time.monotonic() + 5, time.monotonic() + a.kill_s, time.monotonic()
            running, min_free = False, None
            while time.monotonic() < deadline:
                if run.poll() is not None:
                    events.append((time.monotonic() - started, f"weir run exited {run.returncode}"))
                    break
                now = time.monotonic()
                if now >= next_run:
                    r = weir("runctl", "stop" if running else "start", arena, *(["--wait-s", "60"] if running else []))
                    events.append((now - started, f"runctl {'stop' if running else 'start'}: rc {r.returncode} "
                                                  f"{(r.stdout + r.stderr).strip()[:120]}"))
                    running = not running if r.returncode == 0 else running
                    next_run = now + (a.run_s if running else 5)
                if now >= next_kill:
                    rec = parts_of(run.pid).get("recorder", [])
                    for pid in rec:
                        os.kill(pid, signal.SIGKILL)
                    events.append((now - started, f"recorder killed {rec}"))
                    next_kill = now + a.kill_s * rng.uniform(0.7, 1.3)
                if now >= next_sample:
                    st = os.statvfs(disk)
                    free = st.f_bavail * st.f_frsize
                    min_free = free if min_free is None else min(min_free, free)
                    row = {"t": round(now - started, 1), "free_mb": round(free / 2**20, 1),
                           "files": sum(1 for p in (disk / "data").rglob("*.h5")), "procs": {}}
                    for name, pid in [("run", run.pid)] + [(k, p) for k, ps in parts_of(run.pid).items() for p in ps]:
                        s = proc_sample(pid)
                        if s:
                            row["procs"][f"{name}:{pid}"] = s
                    samples.append(row)
                    next_sample = now + a.sample_s
                time.sleep(0.5)
            counters = {k: key(arena, f"record.{k}") for k in
                        ("retention_deleted_files", "retention_deleted_bytes", "retention_blocked", "handoff_ok",
                         "handoff_failures", "files_hashed")}
            if running:
                weir("runctl", "stop", arena, "--wait-s", "60")
            run.send_signal(signal.SIGINT)
            try:
                run.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
            log.close()
            audit = weir("audit", "--all-runs", disk / "data", timeout=600)
            verify = weir("audit", "--all-runs", "--verify", disk / "data", timeout=600)
            files_left = sum(1 for _ in (disk / "data").rglob("*.h5"))
    except MountRefused as e:
        sys.exit(f"SKIPPED: {e}")
    finally:
        weir("rm", arena, "--force")

    elapsed = time.monotonic() - started
    half = [r for r in samples if r["t"] > elapsed / 2]
    run_rss = [(r["t"], v[0] / 1024) for r in half for k, v in r["procs"].items() if k.startswith("run:")]
    run_fds = [(r["t"], v[1]) for r in half for k, v in r["procs"].items() if k.startswith("run:")]
    # The recorder is killed now and then: its slope is that of its longest life in the second half.
    lives = {}
    for r in half:
        for k, v in r["procs"].items():
            if k.startswith("recorder:"):
                lives.setdefault(k, []).append((r["t"], v))
    longest = max(lives.values(), key=len, default=[])
    rec_rss = [(t, v[0] / 1024) for t, v in longest]
    rec_fds = [(t, v[1]) for t, v in longest]
    handed_n = len(handed.read_text().splitlines()) if handed.exists() else 0
    written_mb = a.rate * 4 * a.channels * elapsed / 2**20
    result = {
        "minutes": round(elapsed / 60, 1), "disk_mb": a.disk_mb, "floor_mb": a.floor_mb,
        "written_mb_approx": round(written_mb), "disk_fills": round(written_mb / a.disk_mb, 1),
        "min_free_mb": round(min_free / 2**20, 1) if min_free is not None else None,
        "files_handed_over": handed_n, "files_left": files_left, "counters": counters,
        "run_rss_mb_per_h": round(slope_per_hour(run_rss), 2), "run_fds_per_h": round(slope_per_hour(run_fds), 2),
        "recorder_rss_mb_per_h": round(slope_per_hour(rec_rss), 2),
        "recorder_fds_per_h": round(slope_per_hour(rec_fds), 2),
        "recorder_rss_mb_last": round(rec_rss[-1][1], 1) if rec_rss else None,
        "recorder_life_min": round((rec_rss[-1][0] - rec_rss[0][0]) / 60, 1) if rec_rss else None,
        "audit_rc": audit.returncode, "verify_rc": verify.returncode,
        "audit_tail": audit.stdout.strip().splitlines()[-3:], "verify_tail": verify.stdout.strip().splitlines()[-3:],
        "events": events[-20:],
    }
    (work / "samples.json").write_text(json.dumps(samples))
    print(f"soak: {result['minutes']} min, ~{result['written_mb_approx']} MiB written into a {a.disk_mb} MiB disk "
          f"({result['disk_fills']} fills), free never below {result['min_free_mb']} MiB (floor {a.floor_mb})")
    print(f"  files: handed over {handed_n}, left on disk {files_left}; counters {counters}")
    print(f"  slopes over the second half: weir run RSS {result['run_rss_mb_per_h']} MiB/h, fds "
          f"{result['run_fds_per_h']}/h; recorder RSS {result['recorder_rss_mb_per_h']} MiB/h, fds {result['recorder_fds_per_h']}/h "
          f"(its longest life there, {result['recorder_life_min']} min, ending at {result['recorder_rss_mb_last']} MiB)")
    print(f"  audit exit {audit.returncode}, --verify exit {verify.returncode}; samples in {work / 'samples.json'}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
