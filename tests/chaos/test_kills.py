"""kill -9 at random moments under `weir run`: the sim driver, the fft shard's host, the HDF5
recorder and the supervisor itself, in seeded random order and at seeded random delays. After
each run is stopped cleanly its ledger must balance exactly (ledger_check.check_run): 0 duplicated,
0 unaccounted, `written` equal to the writer's own count, every file open in plain h5py."""
import json
import os
import re
import signal
import time

from chaos import alive, arena_counts, rng_for, wait_for, writer_counts
from ledger_check import check_run, run_files, runs_in

import h5py

PART_RUNS = 3          # supervised runs with parts killed under them
KILLS_PER_KIND = 4     # each kind of part killed this often in a run (its back-off doubles every time)
SUPERVISOR_ROUNDS = 8  # starts of `weir run` killed with SIGKILL, each after one part was killed


def record_of(out, arena, run):
    path = out / f"{arena}_run{run:06d}.ledger.json"
    assert path.exists(), f"no run record {path.name} in {out}: {sorted(p.name for p in out.iterdir())}"
    return json.loads(path.read_text())


def file_runs(files):
    runs = set()
    for path in files:
        with h5py.File(path, "r") as f:
            runs.add(int(f.attrs["run"]))
    return runs


def test_kill_parts_at_random_moments(pipeline):
    rng = rng_for("kill_parts")
    rounds = {"driver": 0, "shard": 0, "recorder": 0}
    for n in range(PART_RUNS):
        p = pipeline()
        run = p.run()
        run.wait_parts(p.kinds)
        order = [k for k in p.kinds for _ in range(KILLS_PER_KIND)]
        rng.shuffle(order)
        for kind in order:
            delay = rng.uniform(0.05, 0.9)
            time.sleep(delay)
            victim = run.kill_part(kind)
            rounds[kind] += 1
            print(f"run {n}: killed {kind} pid {victim} after {delay:.2f} s", flush=True)
        time.sleep(rng.uniform(0.3, 1.0))
        rc = run.stop()
        out = run.output()
        assert "GIVING UP" not in out, f"weir run gave a part up:\n{out[-4000:]}"
        assert rc == 0, f"weir run exits {rc} after a clean stop with every part running:\n{out[-4000:]}"
        counts = writer_counts(out)
        assert "a" in counts and "a.psd" in counts, f"no writer counts in weir run's summary (exit {rc}):\n{out[-4000:]}"
        runs = runs_in(p.out, p.arena)
        assert len(runs) == 1, f"one weir run, {rounds} kills: expected one run, found runs {runs} in {p.out}"
        files = run_files(p.out, p.arena, runs[0])
        ledger = check_run(p.out, p.arena, runs[0], counts)
        said = re.search(r"lost (\d+) block\(s\) of (\d+) written", out)
        assert said and (int(said.group(1)), int(said.group(2))) == (sum(c["lost"] for c in ledger),
                                                                    sum(c["written"] for c in ledger)), \
            f"weir run's summary ({said and said.group(0)}) is not the audited ledger {ledger}"
        assert file_runs(files) == {runs[0]}, f"files of run {runs[0]} name other runs: {file_runs(files)}"
        record = record_of(p.out, p.arena, runs[0])
        assert all(c["final"] for c in record["channels"]), f"a clean stop leaves every mark final: {record['channels']}"
        print(f"run {n}: exact over {len(files)} files, weir run exit {rc}, counts {counts}", flush=True)
    print(f"kill rounds: {rounds}, {sum(rounds.values())} in all", flush=True)
    assert sum(rounds.values()) == PART_RUNS * KILLS_PER_KIND * 3


def test_kill_the_supervisor_then_start_it_again(pipeline):
    """Each start of `weir run` is a run of its own. A supervisor killed with SIGKILL takes its parts
    with it (they get SIGTERM as it dies): the killed run's ledger balances against the writer's
    count its stale arena still holds, its marks are not final; the next start (with --replace, as
    the systemd unit starts it) makes a new arena and run N+1, exact as well."""
    rng = rng_for("kill_supervisor")
    p = pipeline()
    expected, killed_runs, rounds = {}, [], {"supervisor": 0, "driver": 0, "shard": 0, "recorder": 0}
    for n in range(SUPERVISOR_ROUNDS + 1):
        before = set(runs_in(p.out, p.arena)) if p.out.exists() else set()
        run = p.run("--replace")
        run.wait_parts(p.kinds)
        time.sleep(rng.uniform(0.2, 1.2))
        kind = rng.choice(p.kinds)
        run.kill_part(kind)
        rounds[kind] += 1
        time.sleep(rng.uniform(0.1, 1.0))
        if n == SUPERVISOR_ROUNDS:
            rc = run.stop()
            counts = writer_counts(run.output())
        else:
            parts = [pid for pids in run.parts().values() for pid in pids]
            os.kill(run.proc.pid, signal.SIGKILL)
            run.proc.wait(10)
            rounds["supervisor"] += 1
            wait_for(lambda: not any(alive(pid) for pid in parts), 30,
                     f"the parts of a killed supervisor to stop (pids {parts})")
            counts = arena_counts(p.arena)
        new = set(runs_in(p.out, p.arena)) - before
        assert len(new) == 1, f"start {n} of weir run made runs {sorted(new)} (before: {sorted(before)})"
        number = new.pop()
        expected[number] = counts
        if n < SUPERVISOR_ROUNDS:
            killed_runs.append(number)
        print(f"start {n}: run {number}, killed {kind}, then {'stopped' if n == SUPERVISOR_ROUNDS else 'SIGKILL'}; "
              f"writer counts {counts}", flush=True)
    assert rc == 0, f"the last, cleanly stopped run exits {rc}:\n{run.output()[-3000:]}"
    for number, counts in expected.items():
        check_run(p.out, p.arena, number, counts)
        marks = record_of(p.out, p.arena, number)["channels"]
        want_final = number not in killed_runs
        assert all(c["final"] == want_final for c in marks), f"run {number}: marks {marks}, final should be {want_final}"
    print(f"kill rounds: {rounds}, {sum(rounds.values())} in all", flush=True)
