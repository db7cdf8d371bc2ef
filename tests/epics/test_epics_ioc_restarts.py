"""The IOC killed (SIGKILL) for 3 s and started again, 20 times, under a running `weir run` with a
driver "epics" and a recorder: each outage is one disconnected and one connected row in every PV's
connection log, no value is recorded for it (the IOC's counter record restarts at 1 and every value
of each IOC lifetime that weir saw is there, in order, with the IOC's times), the waveform channel
has a `disconnected` gap per outage, the driver's counters agree, and the recording's ledger is exact."""
import os
import signal
import time

import numpy as np
import pytest

from conftest import SoftIoc, ca_env, free_port, require_epics, wait_until
from chaos import Supervised, private_name, remove_arena, weir
from epics_files import channel_frames, pv_logs
from ledger_check import check_run, run_files, runs_in

RESTARTS = int(os.environ.get("WEIR_EPICS_RESTARTS", "20"))
DOWN_S = 3.0


def key_number(arena, key):
    r = weir("get", arena, key)
    try:
        return int(float(r.stdout.strip())) if r.returncode == 0 else None
    except ValueError:
        return None


def test_ioc_killed_and_restarted_20_times(workdir):
    require_epics()
    port = free_port()
    p = f"R{port}:"
    db = f"""
record(calc, "{p}count") {{ field(SCAN, ".1 second") field(CALC, "A+1") field(INPA, "{p}count NPP") field(EGU, "ticks") }}
record(waveform, "{p}wave") {{ field(PINI, "YES") field(NELM, "100") field(FTVL, "DOUBLE") }}
"""
    ioc = SoftIoc(db, workdir, port).start(probe_pv=f"{p}count")
    arena = private_name("eio")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    path = os.path.join(workdir, "restarts.lua")
    with open(path, "w") as f:
        f.write(f"""
arena {{ name = "{arena}", slots = 256 }}
driver "epics" {{ name = "bl", flush_ms = 50,
  pvs = {{ {{ pv = "{p}count", key = "count" }}, {{ pv = "{p}wave", channel = "bl.wave", elements = 100 }} }},
  ca = {{ addr_list = "127.0.0.1", auto_addr_list = false, server_port = {port}, repeater_port = {port + 1} }} }}
record "hdf5" {{ channels = {{ "bl.*" }}, out = "{out}", flush_ms = 200 }}
""")
    run = Supervised(path)
    outages = []
    try:
        wait_until("the driver to connect both PVs", lambda: key_number(arena, "bl.pvs_connected") == 2, timeout_s=30)
        for i in range(RESTARTS):
            seen = key_number(arena, "bl.updates") or 0
            wait_until("a few counter updates", lambda: (key_number(arena, "bl.updates") or 0) >= seen + 3)
            down = time.time_ns()
            ioc.kill()
            wait_until(f"the driver to see outage {i + 1}", lambda: (key_number(arena, "bl.disconnects") or 0) >= 2 * (i + 1))
            time.sleep(DOWN_S)
            up = time.time_ns()
            ioc.start()
            outages.append((down, up))
            wait_until(f"the driver to reconnect after outage {i + 1}", lambda: key_number(arena, "bl.pvs_connected") == 2,
                       timeout_s=60)
        seen = key_number(arena, "bl.updates")
        wait_until("updates after the last restart", lambda: (key_number(arena, "bl.updates") or 0) >= seen + 3)
        counters = {k: key_number(arena, f"bl.{k}") for k in ("updates", "connects", "disconnects", "dropped")}
        assert run.proc.poll() is None, run.output()[-3000:]
    finally:
        rc = run.stop()
        run.close()
        ioc.stop()
    assert rc == 0, run.output()[-3000:]
    assert counters["disconnects"] == 2 * RESTARTS and counters["connects"] == 2 * (RESTARTS + 1), counters
    assert counters["dropped"] == 0, counters
    runs = runs_in(out, arena)
    assert len(runs) == 1, runs
    check_run(out, arena, runs[0])
    files = run_files(out, arena, runs[0])
    log = pv_logs(files)[f"{p}count"]
    status = log["connection_status"].tolist()
    assert status == [1] + [0, 1] * RESTARTS, status
    ctimes = log["connection_status_time"].astype(np.int64)
    t = log["time"].astype(np.int64)
    v = log["value"]
    assert np.all(np.diff(t) > 0), "the IOC's times do not grow"
    # No value inside an outage: the IOC was dead from the kill to the restart, so any value stamped
    # then would be made up. (The first value after a reconnect may be stamped before the driver's
    # own `connected` row: the IOC stamps it, the driver stamps the connection when its DBR_CTRL answer comes.)
    for k, (down, up) in enumerate(outages):
        inside = (t > down) & (t < up)
        assert not inside.any(), (f"outage {k + 1} [{down}, {up}]: values {v[inside]} at {t[inside]}; "
                                  f"all: {list(zip(v.tolist(), t.tolist()))}")
        gone, back = ctimes[1 + 2 * k], ctimes[2 + 2 * k]
        assert down <= gone <= up <= back, f"outage {k + 1}: the log says {gone}..{back}, the test {down}..{up}"
    # Each IOC lifetime counts 1, 2, 3, ...: what weir saw of it is one unbroken run of integers. The
    # lifetimes are told apart by the test's own kill and restart times (a new lifetime's first value
    # may happen to follow the last one's by one).
    bounds = [0]
    for k, (down, up) in enumerate(outages):
        after = int(np.searchsorted(t, up))  # the first value stamped after the restart
        assert after > bounds[-1] and t[after - 1] < down, f"outage {k + 1}: no value before it, or one inside it"
        bounds.append(after)
    bounds.append(len(v))
    for k in range(RESTARTS + 1):
        run_values = v[bounds[k]:bounds[k + 1]]
        assert len(run_values) > 0 and np.all(np.diff(run_values) == 1), f"lifetime {k}: the counter skipped: {run_values}"
    data, seqs, flags, times, gaps, names = channel_frames(files, "bl.wave")
    # Every update the driver had counted before the stop is recorded (values and waveform frames).
    assert len(v) + len(seqs) >= counters["updates"], (len(v), len(seqs), counters)
    disconnected = sum(int(b) for s, b, r, _ in gaps if names[int(r)] == "disconnected")
    assert disconnected == RESTARTS, f"{disconnected} disconnected gap blocks: {gaps}"
    assert len(seqs) - disconnected >= 1, f"{len(seqs)} rows, {disconnected} gaps"  # the first connection's value at least
    remove_arena(arena)
