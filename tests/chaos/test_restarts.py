"""Twenty recorder restarts in one run: a sim driver writes channel a; `weir record --run N` is
killed with SIGKILL at a random moment after its first flush, and started again, 20 times (a
recorder killed before it flushed anything leaves no row, so its restart could not be counted). The
run must stay one run (every file says run N), its ledger exact with a recorder_restart marker per
restart, and `weir replay --speed max` must play the whole run back into a fresh arena: every
recorded block published again, the sequence space the same."""
import json
import signal
import subprocess
import time

from chaos import WEIR, arena_counts, private_name, remove_arena, rng_for, wait_for, weir
from ledger_check import check_run, count_tables, run_files, runs_in

RESTARTS = 20
RUN = 41


def test_twenty_recorder_restarts_make_one_replayable_run(workdir):
    rng = rng_for("recorder_restarts")
    arena, fresh = private_name("r"), private_name("replay")
    out = workdir / "out"
    procs = []
    try:
        assert weir("create", arena).returncode == 0
        sim = subprocess.Popen([WEIR, "sim", arena, "a", "--rate", "102400", "--block", "1024", "--ring", "256"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(sim)
        wait_for(lambda: "a" in arena_counts(arena), 10, f"channel a in arena {arena}")
        time.sleep(0.3)  # blocks before the first recorder: before_start
        record = [WEIR, "record", arena, "--channels", "a", "--out", str(out), "--run", str(RUN),
                  "--rotate-s", "1", "--flush-ms", "200"]
        for i in range(RESTARTS + 1):
            before = len(run_files(out, arena, RUN)) if out.exists() else 0
            rec = subprocess.Popen(record, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            procs.append(rec)
            wait_for(lambda: (out.exists() and len(run_files(out, arena, RUN)) > before) or rec.poll() is not None,
                     15, f"recorder {i} to open its file")
            assert rec.poll() is None, f"recorder {i} exited {rec.returncode}:\n{rec.stdout.read()}"
            time.sleep(rng.uniform(0.35, 1.3))  # past its first flush (flush_ms 200): its restart row is on disk
            if i < RESTARTS:
                rec.kill()
                rec.wait(10)
        sim.send_signal(signal.SIGINT)
        sim_out, _ = sim.communicate(timeout=20)
        counts = arena_counts(arena)  # the writer's own count, now that it stopped
        time.sleep(0.5)               # the recorder reads the last blocks
        rec.send_signal(signal.SIGINT)
        rec_out, _ = rec.communicate(timeout=30)
        assert rec.returncode == 0, f"the last recorder exits {rec.returncode}:\n{rec_out}"

        assert runs_in(out, arena) == [RUN], f"{RESTARTS} restarts with --run {RUN} made runs {runs_in(out, arena)}"
        ledger = check_run(out, arena, RUN, counts, false_reasons=())  # started by hand: before_start is true
        a = next(c for c in ledger if c["channel"] == "a")
        assert a["gaps"].get("before_start", 0) > 0, f"blocks written before the first recorder started: {a}"
        files = run_files(out, arena, RUN)
        markers = count_tables(files)["a"]["gaps"].get("recorder_restart", [])
        per_file = [(f.name, sum(len(x) for x in t["sequences"]), t["gaps"]) for f in files
                    for t in [count_tables([f]).get("a", {"sequences": [], "gaps": {}})]]
        assert len(markers) == RESTARTS, f"{RESTARTS} restarts, {len(markers)} recorder_restart rows: {markers}; " \
            f"per file (blocks of a, gap rows): {per_file}"
        assert all(b == 0 for _, b in markers), f"recorder_restart rows are markers (blocks = 0): {markers}"
        print(f"run {RUN}: {len(files)} files, ledger {a}", flush=True)

        assert weir("create", fresh).returncode == 0
        r = weir("replay", *files, fresh, "--speed", "max", "--json", timeout=120)
        assert r.returncode == 0, f"weir replay of run {RUN} failed ({r.returncode}): {r.stderr}"
        report = json.loads(r.stdout)
        print(f"replay report: {report}", flush=True)
        played = next(c for c in report["channels"] if c["name"] == "a")
        assert played["blocks_published"] == a["recorded"] and played["blocks_dropped"] == 0, \
            f"replay published {played['blocks_published']} blocks (dropped {played['blocks_dropped']}), the run holds {a['recorded']}"
        counted = arena_counts(fresh)["a"][0]  # the fresh arena's own count: blocks replayed plus the gaps skipped
        assert counted == a["end"] - a["first"], \
            f"the fresh arena counts {counted} blocks of a, the run's sequence space is [{a['first']}, {a['end']})"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        remove_arena(arena)
        remove_arena(fresh)
