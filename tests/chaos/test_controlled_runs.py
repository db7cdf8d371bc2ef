"""Controlled runs (runs = "controlled") under faults: parts killed with SIGKILL at random moments
inside runs that `weir runctl` starts and stops, and a disk that fills inside a run. Every run's
ledger balances exactly (ledger_check.check_run), no block is in two runs (`weir audit --all-runs`),
and every run has its row in the run log, however it ended."""
import json
import time

from chaos import recording, rng_for, runctl_start, runctl_status, tmpfs, wait_for, weir
from ledger_check import check_run

RUNS = 8  # runs, each with one part killed inside it
CONTROLLED = ', runs = "controlled"'


def rows(out):
    return json.loads(weir("runs", "ls", str(out), "--json").stdout)["runs"]


def test_parts_killed_inside_controlled_runs(pipeline):
    rng = rng_for("controlled_kills")
    p = pipeline(arena_extra=CONTROLLED)
    run = p.run()
    run.wait_parts(p.kinds)
    wait_for(lambda: runctl_status(p.arena)["dir"] and any(r["alive"] for r in runctl_status(p.arena)["recorders"]), 30,
             "the recorder to join the run control")
    for n in range(1, RUNS + 1):
        assert runctl_start(p.arena) == n
        wait_for(lambda: recording(p.arena, n), 30, f"run {n}'s first block:\n{run.output()[-3000:]}")
        time.sleep(rng.uniform(0.05, 0.6))
        kind = rng.choice(p.kinds)
        victim = run.kill_part(kind)
        print(f"run {n}: killed {kind} pid {victim}", flush=True)
        wait_for(lambda: recording(p.arena, n), 30, f"run {n} recorded again after the kill:\n{run.output()[-3000:]}")
        time.sleep(rng.uniform(0.05, 0.6))
        stopped = weir("runctl", "stop", p.arena, "--wait-s", "30")
        assert stopped.returncode == 0, f"run {n}: {stopped.stdout}{stopped.stderr}\n{run.output()[-3000:]}"
    rc = run.stop()
    assert rc == 0, run.output()[-4000:]
    for n in range(1, RUNS + 1):
        check_run(p.out, p.arena, n)
    log = rows(p.out)
    assert [r["run"] for r in log] == list(range(1, RUNS + 1))
    assert all(r["ended"] == "stopped" and r["exact"] for r in log), log
    audit = weir("audit", str(p.out), "--all-runs")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_full_disk_inside_a_controlled_run(workdir, staged, pipeline):
    disk = staged(tmpfs(workdir / "small", 12))
    p = pipeline(out=disk / "out", shard=False, rate=2_048_000, ring=1024, rotate_s=2, arena_extra=CONTROLLED)
    run = p.run()
    run.wait_parts(p.kinds)
    wait_for(lambda: any(r["alive"] for r in runctl_status(p.arena)["recorders"]), 30, "the recorder to join")
    n = runctl_start(p.arena)
    wait_for(lambda: "exit 3" in run.output(), 60, f"the recorder to stop on the full disk:\n{run.output()[-3000:]}")
    stopped = weir("runctl", "stop", p.arena, "--wait-s", "3", "--json")
    row = json.loads(stopped.stdout)
    print(stopped.stdout, stopped.stderr)
    # The recorder restarted on the full disk cannot close the run: the stop says so, exit 5.
    assert stopped.returncode == 5, stopped.stderr
    assert row["run"] == n and row["ended"] == "stopped" and row["blocks_lost"] > 0, row
    run.stop()
    channels = check_run(p.out, p.arena, n)
    a = next(c for c in channels if c["channel"] == "a")
    assert a["gaps"].get("disk_error", 0) > 0, f"the blocks after the full disk are a disk_error tail: {a}"
    log = rows(p.out)
    assert [r["run"] for r in log] == [n] and log[0]["ended"] == "stopped", log
