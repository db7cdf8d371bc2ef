"""Retention (recorders/stream/README.md, "Retention"): a loop-mounted 200 MiB ext4 written fast by a
controlled-run pipeline whose recorder declares `keep`, filled about twice over. The free space never falls to the recorder's floor; only
handed-over files of finished runs are deleted, each on record in its run's record, logged with its
reason and counted (the three counts equal); the open run is whole and balances; every remaining
file verifies against its manifest and `weir audit` names the deleted ones deleted. A file whose
hand-off fails is kept while others go (a small tmpfs). With nothing deletable the recorder stops at
its floor (exit 3), the alarm (key and log line) first."""
import json
import os
import re
import threading
import time
from pathlib import Path

from chaos import ext4, key_u64, recording, runctl_start, runctl_status, tmpfs, wait_for, weir
from ledger_check import check_run, run_files

CONTROLLED = ', runs = "controlled"'
MIB = 1024 * 1024
LOGGER_DISK_MB = 200  # the loop-mounted ext4 the main test fills
LOGGER_RATE = 4_096_000  # f32 samples/s: 16 MB/s, so five runs of ten files fill it about twice
DISK_MB = 64        # the tmpfs of the other tests
FREE_MIB = 20       # keep.free_gib, in MiB
FLOOR_MB = 4        # min_free_mb: where the recorder stops (exit 3)
RATE = 2_048_000    # f32 samples/s: 8 MB/s
RUNS = 5


def keep(free_mib=FREE_MIB, handoff=None, after=None):
    extra = f", min_free_mb = {FLOOR_MB}, keep = {{ free_gib = {free_mib / 1024!r}"
    extra += f', after = "{after}" }}' if after else " }"
    if handoff is not None:  # a trivial hand-off: logs the name; fails while HANDOFF/fail-NAME exists
        script = f"[ -e {handoff}/fail-$0 ] && exit 1; echo ok $0 >> {handoff}/log"
        extra += (f', on_close = {{"/bin/sh", "-c", "{script}", "{{name}}"}}, '
                  "on_close_retry_s = 0.2, on_close_retry_max_s = 0.5, on_close_timeout_s = 30")
    return extra


class FreeWatch:
    """Polls statvfs of `path` every few ms in a thread; `lowest` is the least free seen (bytes)."""

    def __init__(self, path):
        self.path, self.lowest, self.samples = str(path), None, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self):
        while not self._stop.is_set():
            st = os.statvfs(self.path)
            free = st.f_bavail * st.f_frsize
            self.lowest = free if self.lowest is None else min(self.lowest, free)
            self.samples += 1
            self._stop.wait(0.005)

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        return self.lowest


def record_of(out, arena, run):
    return json.loads((Path(out) / f"{arena}_run{run:06d}.ledger.json").read_text())


def audit_json(out, run, *extra):
    r = weir("audit", str(out), "--run", str(run), "--json", *extra, timeout=120)
    objects = [json.loads(line) for line in r.stdout.splitlines() if line.strip().startswith("{")]
    return r.returncode, objects, r.stdout + r.stderr


def controlled_runs(p, run, runs, files_per_run):
    """Starts and stops `runs` controlled runs, each stopped once it has closed `files_per_run` files."""
    wait_for(lambda: any(r["alive"] for r in runctl_status(p.arena)["recorders"]), 30, "the recorder to join the run control")
    for n in range(1, runs + 1):
        assert runctl_start(p.arena) == n
        wait_for(lambda: recording(p.arena, n), 30, f"run {n}'s first block:\n{run.output()[-3000:]}")
        wait_for(lambda: len(run_files(p.out, p.arena, n)) > files_per_run, 60,
                 f"run {n} to close {files_per_run} files (has {len(run_files(p.out, p.arena, n))}):\n{run.output()[-3000:]}")
        stopped = weir("runctl", "stop", p.arena, "--wait-s", "30")
        assert stopped.returncode == 0, f"run {n}: {stopped.stdout}{stopped.stderr}\n{run.output()[-3000:]}"


def deletions(out, arena, runs):
    """Every deletion record, as (run, record entry)."""
    return [(n, d) for n in runs for d in record_of(out, arena, n).get("deleted", [])]


def test_retention_keeps_the_disk_off_its_floor_across_controlled_runs(workdir, staged, pipeline):
    disk = staged(ext4(workdir / "logger", LOGGER_DISK_MB))
    dest = workdir / "dest"  # the hand-off's log, off the small disk
    dest.mkdir()
    p = pipeline(out=disk / "out", shard=False, rate=LOGGER_RATE, ring=1024, rotate_s=0.5, arena_extra=CONTROLLED,
                 record_extra=keep(handoff=dest))
    run = p.run()
    run.wait_parts(p.kinds)
    watch = FreeWatch(disk)
    began = time.monotonic()
    try:
        controlled_runs(p, run, RUNS, 10)
    finally:
        lowest = watch.stop()
    counted = key_u64(p.arena, "record.retention_deleted_files")  # while the arena is there: every run has closed
    counted_bytes = key_u64(p.arena, "record.retention_deleted_bytes")
    rc = run.stop()
    assert rc == 0, f"weir run exits {rc}:\n{run.output()[-4000:]}"
    out = run.output()
    written = sum(d["bytes"] for _, d in deletions(p.out, p.arena, range(1, RUNS + 1))) + \
        sum(f.stat().st_size for f in Path(p.out).iterdir() if f.name.endswith(".h5"))
    print(f"{RUNS} runs in {time.monotonic() - began:.1f} s, {written / MIB:.0f} MiB of files; least free on the "
          f"{LOGGER_DISK_MB} MiB ext4: "
          f"{lowest / MIB:.1f} MiB ({watch.samples} looks), keep.free_gib = {FREE_MIB} MiB, floor {FLOOR_MB} MiB")
    assert lowest > FLOOR_MB * MIB, f"free space fell to {lowest} bytes, the recorder's floor is {FLOOR_MB} MiB:\n{out[-3000:]}"
    assert "exit 3" not in out, f"the recorder stopped on a full disk:\n{out[-3000:]}"

    gone = deletions(p.out, p.arena, range(1, RUNS + 1))
    logged = re.findall(r"retention deleted (\S+) \(run (\d+), (\d+) bytes\), reason (\w+)", out)
    print(f"deleted: {len(gone)} on record, {len(logged)} logged, counter {counted}")
    assert gone, f"nothing was deleted: the disk never needed it?\n{out[-3000:]}"
    assert len(gone) == len(logged) == counted, f"records {len(gone)}, log lines {len(logged)}, counter {counted}"
    assert counted_bytes == sum(d["bytes"] for _, d in gone)
    handed = set(Path(dest / "log").read_text().split())  # "ok NAME" lines
    for n, d in gone:
        assert n < RUNS, f"a file of the last run, open while retention ran, was deleted: {d}"
        assert not (p.out / d["file"]).exists() and not (p.out / (d["file"] + ".sha256")).exists(), d
        assert d["reason"] == "free_space" and d["sha256"], d
        assert d["file"] in handed, f"{d['file']} was deleted without a successful hand-off"
        assert d["deleted_ns"] >= record_of(p.out, p.arena, n)["stopped_ns"] > 0, f"{d} deleted before its run {n} ended"

    # The open (last) run is whole and balances; every run's remains verify; deleted files named deleted.
    check_run(p.out, p.arena, RUNS)
    assert not any(n == RUNS for n, _ in gone)
    for n in range(1, RUNS + 1):
        rc, objects, text = audit_json(p.out, n)
        assert rc == 0, f"weir audit of run {n} exits {rc}:\n{text}"
        files = next(o for o in objects if "files" in o)["files"]
        named = sorted(f["path"].rsplit("/", 1)[-1] for f in files if f["state"] == "deleted")
        assert named == sorted(d["file"] for m, d in gone if m == n), f"run {n}: audit names deleted {named}:\n{text}"
        channels = [o for o in objects if "channel" in o]
        assert all(c["unaccounted"] == 0 and c["duplicates"] == 0 for c in channels), f"run {n}:\n{text}"
        if named:
            assert sum(c["deleted"] for c in channels) > 0, f"run {n}: deleted files but no deleted blocks:\n{text}"
        rc, _, text = audit_json(p.out, n, "--verify")
        assert rc == 0, f"weir audit --verify of run {n} exits {rc}:\n{text}"
        assert '"state": "missing"' not in text.replace('":"', '": "'), text
    rows = json.loads(weir("runs", "ls", str(p.out), "--json").stdout)["runs"]
    states = {r["run"]: r["retention"] for r in rows}
    print(f"run log: {states}")
    assert states[RUNS] == "kept" and any(s != "kept" for s in states.values()), states


def test_a_file_whose_handoff_fails_is_kept_while_others_go(workdir, staged, pipeline):
    disk = staged(tmpfs(workdir / "small", DISK_MB))
    dest = workdir / "dest"
    dest.mkdir()
    p = pipeline(out=disk / "out", shard=False, rate=RATE, ring=1024, rotate_s=0.5, arena_extra=CONTROLLED,
                 record_extra=keep(handoff=dest))
    stuck = f"{p.arena}_run000001_0001.h5"
    (dest / f"fail-{stuck}").touch()
    run = p.run()
    run.wait_parts(p.kinds)
    controlled_runs(p, run, 4, 5)
    rc = run.stop()
    assert rc == 0, f"weir run exits {rc}:\n{run.output()[-4000:]}"
    gone = {d["file"] for _, d in deletions(p.out, p.arena, range(1, 5))}
    run1 = {f"{p.arena}_run000001_{s:04d}.h5" for s in range(0, 6)}
    print(f"deleted of run 1: {sorted(gone & run1)}; kept: {stuck}")
    assert (p.out / stuck).exists() and stuck not in gone, f"{stuck}, never handed over, was deleted"
    assert not (p.out / (stuck + ".handed")).exists()
    assert len(gone & run1) >= 3, f"the other files of run 1 should have gone: {sorted(gone)}\n{run.output()[-3000:]}"
    rc, objects, text = audit_json(p.out, 1, "--verify")
    assert rc == 0, f"weir audit --verify of run 1 exits {rc}:\n{text}"


def test_nothing_deletable_stops_at_the_floor_after_the_alarm(workdir, staged, pipeline):
    disk = staged(tmpfs(workdir / "small", 24))
    # One long run: every file is the open run's, so nothing may go; keep.free_gib above what the disk can hold.
    p = pipeline(out=disk / "out", shard=False, rate=RATE, ring=1024, rotate_s=0.5, record_extra=keep(free_mib=16))
    run = p.run()
    run.wait_parts(p.kinds)
    wait_for(lambda: "exit 3" in run.output(), 60, f"the recorder to stop on the full disk:\n{run.output()[-3000:]}")
    blocked = wait_for(lambda: key_u64(p.arena, "record.retention_blocked"), 10, "the key hdf5.retention_blocked set")
    rc = run.stop()
    out = run.output()
    alarm = out.find("retention blocked")
    stop = out.find("exit 3")
    print(f"alarm at {alarm}, exit 3 at {stop}, record.retention_blocked = {blocked}, weir run exit {rc}")
    assert 0 <= alarm < stop, f"no 'retention blocked' line before the stop:\n{out[-3000:]}"
    assert blocked == 1, f"record.retention_blocked = {blocked}"
    assert "retention deleted" not in out, f"a file of the open run was deleted:\n{out[-3000:]}"
