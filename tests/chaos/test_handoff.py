"""Closed files handed over: each gets its SHA-256 manifest (FILE.sha256) and, with `on_close`, one
recorded success of the hand-off command (FILE.handed), off the recording thread. A command that
fails for one file is retried with back-off while later files go on; a recorder killed mid-hand-off
and restarted ends with exactly one success per file; `weir audit --verify` names a file that
changed, is missing or has no manifest; inotifywait sees every recording written as NAME.partial and
renamed to its final name after its last write (nothing ever created or written under a final name),
and every manifest and marker renamed in whole after its file's last write."""
import hashlib
import os
import re
import signal
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from chaos import key_u64, wait_for, weir, writer_counts
from ledger_check import check_run, run_files

COMMAND = Path(__file__).resolve().parent / "handoff_cmd.py"
RUN = 1  # a fresh output directory's first run


def on_close(dest, retry_s=0.2, retry_max_s=0.5):
    return (f', on_close = {{"/usr/bin/python3", "{COMMAND}", "{dest}", "{{path}}"}}, '
            f'on_close_retry_s = {retry_s}, on_close_retry_max_s = {retry_max_s}, on_close_timeout_s = 30')


def name(arena, segment):
    return f"{arena}_run{RUN:06d}_{segment:04d}.h5"


def handed(out, arena, segment):
    return (Path(out) / (name(arena, segment) + ".handed")).exists()


def log_lines(dest):
    path = Path(dest) / "log"
    return path.read_text().splitlines() if path.exists() else []


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def check_every_file_handed_once(out, arena, dest):
    files = run_files(out, arena, RUN)
    assert files, f"no file of run {RUN} in {out}"
    oks = [line.split()[1] for line in log_lines(dest) if line.startswith("ok ")]
    for f in files:
        marker = Path(str(f) + ".handed")
        assert marker.exists(), f"{f.name} has no hand-off marker; markers: {sorted(p.name for p in Path(out).glob('*.handed'))}"
        assert oks.count(f.name) == 1, f"{f.name}: {oks.count(f.name)} successful hand-offs in {dest}/log:\n" + "\n".join(log_lines(dest))
        copy = Path(dest) / f.name
        assert copy.exists() and sha256(copy) == sha256(f), f"{copy} is not the file {f} as closed"
    return files


def verify(out):
    r = weir("audit", str(out), "--verify", timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_a_failing_handoff_is_kept_and_retried_while_later_files_go_on(pipeline, workdir):
    dest = workdir / "dest"
    dest.mkdir()
    p = pipeline(shard=False, rotate_s=1, record_extra=on_close(dest))
    second = name(p.arena, 1)
    (dest / f"fail-{second}").touch()
    run = p.run()
    run.wait_parts(p.kinds)

    def later_ones_on():
        fails = sum(1 for line in log_lines(dest) if line == f"fail {second}")
        return fails >= 2 and handed(p.out, p.arena, 2) and handed(p.out, p.arena, 3) and not handed(p.out, p.arena, 1) \
            and (key_u64(p.arena, "record.handoff_failures") or 0) >= 2 and (fails, key_u64(p.arena, "record.handoff_failures"))
    try:
        fails, counted = wait_for(later_ones_on, 40, "files 2 and 3 handed over while file 1 fails again and again")
    except AssertionError as e:
        raise AssertionError(f"{e}; log: {log_lines(dest)}; markers: {sorted(x.name for x in p.out.glob('*.handed'))}; "
                             f"record.handoff_failures = {key_u64(p.arena, 'record.handoff_failures')}\n{run.output()[-3000:]}")
    print(f"{second}: {fails} failed tries (record.handoff_failures = {counted}) while later files were handed over")
    assert (p.out / second).exists(), f"{second} was not kept"
    (dest / f"fail-{second}").unlink()
    wait_for(lambda: handed(p.out, p.arena, 1), 20, f"{second} handed over once its command succeeds")
    assert key_u64(p.arena, "record.handoff_ok") is not None, "no record.handoff_ok key"
    rc = run.stop()
    assert rc == 0, f"weir run exits {rc}:\n{run.output()[-3000:]}"
    check_every_file_handed_once(p.out, p.arena, dest)
    attempts = int(re.search(r'"attempts": (\d+)', (p.out / (second + ".handed")).read_text()).group(1))
    assert attempts >= 3, f"{second}.handed says {attempts} attempts; the log shows {fails} failures first"
    check_run(p.out, p.arena, RUN, writer_counts(run.output()))
    rc, text = verify(p.out)
    assert rc == 0, f"weir audit --verify exits {rc}:\n{text}"


def test_a_recorder_killed_mid_handoff_ends_with_one_success_per_file(pipeline, workdir):
    dest = workdir / "dest"
    dest.mkdir()
    (dest / "slow").write_text("2.0")  # each hand-off takes 2 s: a kill lands inside one
    p = pipeline(shard=False, rotate_s=1, record_extra=on_close(dest))
    run = p.run()
    run.wait_parts(p.kinds)

    def in_flight():
        for started in dest.glob("started-*"):
            f = started.name[len("started-"):]
            if not (p.out / (f + ".handed")).exists():
                return f
        return None
    busy = wait_for(in_flight, 30, "a hand-off in progress")
    victim = run.kill_part("recorder")
    print(f"killed recorder pid {victim} while handing over {busy}")
    (dest / "slow").unlink()

    def caught_up():
        files = run_files(p.out, p.arena, RUN)
        return len(files) >= 5 and all(Path(str(f) + ".handed").exists() for f in files[:-1])
    wait_for(caught_up, 60, f"the restarted recorder handing over {busy} and the files after it")
    rc = run.stop()
    assert rc == 0, f"weir run exits {rc}:\n{run.output()[-3000:]}"
    files = check_every_file_handed_once(p.out, p.arena, dest)
    print(f"{len(files)} files, each handed over once; {busy} was in flight at the kill")
    check_run(p.out, p.arena, RUN, writer_counts(run.output()))
    rc, text = verify(p.out)
    assert rc == 0, f"weir audit --verify exits {rc}:\n{text}"


def test_a_new_run_takes_up_what_a_killed_run_still_owes(pipeline, workdir):
    """weir run killed -9 with its recorder while every hand-off of run 1 fails and a file is open: the
    next weir run (run 2) names run 1's NAME.partial, hashes it into a manifest that names run 1, and
    hands over every file of run 1 exactly once, besides its own."""
    dest = workdir / "dest"
    dest.mkdir()
    p = pipeline(shard=False, rotate_s=0.5, record_extra=on_close(dest))
    for segment in range(100):
        (dest / f"fail-{name(p.arena, segment)}").touch()
    first = p.run()
    first.wait_parts(p.kinds)

    def owed():
        files = run_files(p.out, p.arena, RUN)
        failed = {line.split()[1] for line in log_lines(dest) if line.startswith("fail ")}
        return len(files) >= 4 and {f.name for f in files[:3]} <= failed and files
    wait_for(owed, 30, "run 1 with three closed files whose hand-off failed")
    recorder = first.parts()["recorder"][0]
    os.kill(recorder, signal.SIGKILL)  # the recorder first (a kill -9 mid-file), then its supervisor
    os.kill(first.proc.pid, signal.SIGKILL)
    first.proc.wait(10)
    first.close()
    left = run_files(p.out, p.arena, RUN)
    partial = [f for f in left if f.name.endswith(".partial")]
    assert len(partial) == 1 and partial[0] == left[-1], f"run 1 after the kill: {[f.name for f in left]}"
    assert not any(Path(str(f) + ".handed").exists() for f in left), "a hand-off succeeded while every one fails"
    final = Path(str(partial[0])[: -len(".partial")])
    for f in dest.glob("fail-*"):
        f.unlink()

    second = p.run("--replace")  # the arena the killed run left, as a logger's unit starts it again
    second.wait_parts(p.kinds)

    def taken_up():
        files = run_files(p.out, p.arena, RUN)
        return all(f.name.endswith(".h5") and Path(str(f) + ".handed").exists() for f in files) and files
    files = wait_for(taken_up, 60, f"every file of run 1 handed over by run 2's recorder:\n{second.output()[-3000:]}")
    wait_for(lambda: len(run_files(p.out, p.arena, RUN + 1)) >= 2, 30, "run 2 recording")
    rc = second.stop()
    assert rc == 0, f"weir run exits {rc}:\n{second.output()[-3000:]}"
    assert [f.name for f in files] == [f.name for f in left[:-1]] + [final.name], files
    check_every_file_handed_once(p.out, p.arena, dest)
    manifest = Path(str(final) + ".sha256").read_text()
    assert "# weir-manifest run=1 " in manifest, f"{final.name}.sha256 does not name run 1:\n{manifest}"
    assert f"named {final}" in second.output(), second.output()[-3000:]
    assert f"taking up {len(files)} closed file(s) of earlier runs" in second.output(), second.output()[-3000:]
    for run in (RUN, RUN + 1):
        r = weir("audit", str(p.out), "--run", str(run), "--verify", timeout=120)
        assert r.returncode == 0, f"weir audit --verify of run {run} exits {r.returncode}:\n{r.stdout}{r.stderr}"
    print(f"run 1: {len(files)} files taken up by run 2's recorder, {final.name} named from its .partial")


def test_audit_verify_names_a_changed_a_missing_and_an_extra_file(pipeline):
    p = pipeline(shard=False, rotate_s=0.5)
    run = p.run()
    run.wait_parts(p.kinds)
    wait_for(lambda: len(run_files(p.out, p.arena, RUN)) >= 5, 30, "five files")
    rc = run.stop()
    assert rc == 0, f"weir run exits {rc}:\n{run.output()[-3000:]}"
    files = run_files(p.out, p.arena, RUN)
    rc, text = verify(p.out)
    assert rc == 0, f"weir audit --verify of an untouched run exits {rc}:\n{text}"
    for f in files:  # the manifests are what sha256sum -c reads
        r = subprocess.run(["sha256sum", "-c", "--strict", f.name + ".sha256"], cwd=p.out, capture_output=True, text=True)
        assert r.returncode == 0, f"sha256sum -c {f.name}.sha256: {r.stdout}{r.stderr}"
    flipped, gone, unlisted = files[1], files[2], files[0]
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0x01
    flipped.write_bytes(bytes(data))
    rc, text = verify(p.out)
    assert rc == 6 and f"changed {flipped}" in text, f"one flipped byte in {flipped.name}: exit {rc}:\n{text}"
    gone.unlink()
    Path(str(unlisted) + ".sha256").unlink()
    rc, text = verify(p.out)
    assert rc != 0, f"exit 0 with a file changed, one missing and one without a manifest:\n{text}"
    for state, f in (("changed", flipped), ("missing", gone), ("extra", unlisted)):
        assert f"{state} {f}" in text, f"weir audit --verify does not name {f.name} as {state}:\n{text}"


def test_inotify_sees_every_file_renamed_to_its_final_name_after_its_last_write(pipeline, workdir):
    if shutil.which("inotifywait") is None:
        pytest.skip("no inotifywait (Debian: inotify-tools, in scripts/deps.sh's test set)")
    dest = workdir / "dest"
    dest.mkdir()
    out = workdir / "watched"
    out.mkdir()
    log = workdir / "inotify.log"
    watcher = subprocess.Popen(["inotifywait", "-m", "-e", "create,modify,close_write,moved_to,moved_from,delete",
                                "--format", "%e|%f", "--outfile", str(log), str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        said = ""
        deadline = time.monotonic() + 20
        while "Watches established" not in said:  # inotifywait's own word that it watches now
            assert time.monotonic() < deadline and watcher.poll() is None, f"inotifywait did not start watching {out}: {said}"
            said += watcher.stderr.readline()
        p = pipeline(out=out, shard=False, rotate_s=0.5, record_extra=on_close(dest))
        run = p.run()
        run.wait_parts(p.kinds)
        wait_for(lambda: len(run_files(out, p.arena, RUN)) >= 6, 30, "six files")
        rc = run.stop()
        assert rc == 0, f"weir run exits {rc}:\n{run.output()[-3000:]}"
        files = run_files(out, p.arena, RUN)
        last = files[-1].name + ".handed"
        wait_for(lambda: log.exists() and f"MOVED_TO|{last}" in log.read_text(), 20, f"inotifywait reporting {last}")
    finally:
        watcher.terminate()
        watcher.wait(10)
    events_text = log.read_text()
    events = [tuple(e.split("|", 1)) for e in events_text.splitlines() if "|" in e]
    assert events, f"inotifywait saw nothing in {out}"
    final = re.compile(re.escape(p.arena) + r"_run\d+_\d+\.h5(\.sha256|\.handed)?$")
    problems = []
    for i, (kinds, f) in enumerate(events):
        if not final.match(f):
            continue
        for kind in ("CREATE", "MODIFY", "CLOSE_WRITE"):  # a final name is only ever renamed in, whole
            if kind in kinds:
                problems.append(f"event {i}: {f} {kind} under its final name ({kinds})")
        if "MOVED_TO" not in kinds:
            continue
        # The recording (itself, or the one a manifest or marker is of), written as NAME.partial.
        data = f if f.endswith(".h5") else f.rsplit(".", 1)[0]
        later_writes = [j for j, (k, g) in enumerate(events)
                        if g == data + ".partial" and j > i and ("CLOSE_WRITE" in k or "MODIFY" in k)]
        if later_writes:
            problems.append(f"event {i}: {f} renamed in before {data}.partial's last write (event {later_writes[-1]})")
        if data != f and not any(g == data and "MOVED_TO" in k for k, g in events[:i]):
            problems.append(f"event {i}: {f} renamed in before {data} had its final name")
    for f in files:
        assert f.name.endswith(".h5"), f"{f.name}: the run stopped cleanly, yet a file is not under its final name"
        partial_writes = [i for i, (k, g) in enumerate(events) if g == f.name + ".partial" and "MODIFY" in k]
        renamed = [i for i, (k, g) in enumerate(events) if g == f.name and "MOVED_TO" in k]
        if not partial_writes or len(renamed) != 1 or renamed[0] < partial_writes[-1]:
            problems.append(f"{f.name}: {len(partial_writes)} writes as {f.name}.partial, renamed in at {renamed}")
        for suffix in (".sha256", ".handed"):
            if not any(g == f.name + suffix and "MOVED_TO" in k for k, g in events):
                problems.append(f"{f.name}{suffix} never renamed in")
    assert not problems, "\n".join(problems) + "\nevents:\n" + events_text[-4000:]
    print(f"{len(events)} events, {len(files)} files: every recording written as NAME.partial and renamed in once, "
          "whole, and every manifest and marker renamed in after its file's last write")
