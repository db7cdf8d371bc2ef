"""driver "epics" against EPICS's own softIoc: every update of ai, longin, bi, mbbi and stringin
records, changed with Debian's pyepics, is in the recording with the IOC's time stamp, units, alarm
severity and status and enum state, exactly as an independent pyepics monitor saw it; a waveform
over 16 kB becomes a channel, one frame per update, with a `disconnected` gap while its IOC is away;
`weir check` refuses bad PV lists naming file and line."""
import http.client
import os
import re
import subprocess
import time

import h5py
import numpy as np
import pytest

from conftest import SoftIoc, caget, ca_env, epics_bin, free_port, require_epics, wait_until
from chaos import WEIR, Supervised, private_name, remove_arena, weir
from epics_files import channel_frames, pv_logs, text
from ledger_check import check_run, run_files, runs_in

epics = pytest.importorskip("epics", reason="SKIPPED LOUDLY: Debian's python3-pyepics is not installed")

MENU_ALARM_STAT = ["NO_ALARM", "READ", "WRITE", "HIHI", "HIGH", "LOLO", "LOW", "STATE", "COS", "COMM", "TIMEOUT",
                   "HWLIMIT", "CALC", "SCAN", "LINK", "SOFT", "BAD_SUB", "UDF", "DISABLE", "SIMM", "READ_ACCESS",
                   "WRITE_ACCESS"]


def records(p, wave_elements=4096):
    return f"""
record(ai, "{p}temp") {{ field(PINI, "YES") field(VAL, "20") field(EGU, "degC") field(PREC, "2")
  field(HOPR, "100") field(LOPR, "-10") field(HIHI, "90") field(HHSV, "MAJOR") field(HIGH, "70") field(HSV, "MINOR")
  field(LOW, "10") field(LSV, "MINOR") field(LOLO, "-5") field(LLSV, "MAJOR") }}
record(longin, "{p}count") {{ field(PINI, "YES") field(EGU, "counts") field(HOPR, "1000") }}
record(bi, "{p}shutter") {{ field(PINI, "YES") field(ZNAM, "Closed") field(ONAM, "Open") field(OSV, "MINOR") }}
record(mbbi, "{p}mode") {{ field(PINI, "YES") field(ZRST, "Idle") field(ONST, "Ramping") field(TWST, "Stable") }}
record(stringin, "{p}sample") {{ field(PINI, "YES") field(VAL, "none") }}
record(waveform, "{p}spectrum") {{ field(PINI, "YES") field(NELM, "{wave_elements}") field(FTVL, "DOUBLE") }}
"""


def pipeline(path, arena, out, p, port, wave_elements=4096, extra_pvs=""):
    text_ = f"""
arena {{ name = "{arena}", slots = 512 }}
driver "epics" {{ name = "bl", flush_ms = 50,
  pvs = {{ {{ pv = "{p}temp", key = "temp" }}, {{ pv = "{p}count", key = "count" }}, {{ pv = "{p}shutter", key = "shutter" }},
          {{ pv = "{p}mode", key = "mode" }}, {{ pv = "{p}sample", key = "sample" }},
          {{ pv = "{p}spectrum", channel = "bl.spectrum", elements = {wave_elements}, rate = 10 }} {extra_pvs} }},
  ca = {{ addr_list = "127.0.0.1", auto_addr_list = false, server_port = {port}, repeater_port = {port + 1} }} }}
record "hdf5" {{ channels = {{ "bl.*" }}, keys = {{ "temp", "count" }}, out = "{out}", flush_ms = 200 }}
"""
    with open(path, "w") as f:
        f.write(text_)
    return path


def serve_metrics(arena):
    """`weir serve`'s /metrics for the arena (a server on a free loopback port, stopped after)."""
    proc = subprocess.Popen([WEIR, "serve", arena, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        port = re.search(r"http://[^/]+:(\d+)/", line)
        assert port, f"weir serve did not start: {line!r}"
        conn = http.client.HTTPConnection("127.0.0.1", int(port.group(1)), timeout=10)
        conn.request("GET", "/metrics")
        body = conn.getresponse().read().decode()
        conn.close()
        return body
    finally:
        proc.kill()
        proc.wait(10)


def key_number(arena, key):
    r = weir("get", arena, key)
    try:
        return int(float(r.stdout.strip())) if r.returncode == 0 else None
    except ValueError:
        return None


class Monitor:
    """An independent pyepics monitor of one PV: every update's (value, time stamp, severity, status, char_value)."""

    def __init__(self, name):
        self.seen = []
        self.pv = epics.PV(name, form="time", auto_monitor=True, callback=self.update)

    def update(self, value=None, timestamp=None, severity=None, status=None, char_value=None, **_):
        self.seen.append((value.copy() if isinstance(value, np.ndarray) else value, timestamp, severity, status, char_value))


@pytest.fixture(scope="module")
def ioc_env():
    # One port for the module's IOCs (one at a time): pyepics reads the EPICS_CA_* variables once, when
    # its CA context starts, and keeps that context for the whole process.
    require_epics()
    port = free_port()
    env = ca_env(port)
    for k in ("EPICS_CA_SERVER_PORT", "EPICS_CA_ADDR_LIST", "EPICS_CA_AUTO_ADDR_LIST", "EPICS_CA_REPEATER_PORT",
              "EPICS_CA_MAX_ARRAY_BYTES"):
        os.environ[k] = env[k]  # pyepics, in this process, reads them when its context starts
    os.environ["PATH"] = env["PATH"]
    return port


def test_every_update_recorded_with_ioc_time_units_alarms_and_states(workdir, ioc_env):
    port = ioc_env
    p = f"T{port}:"
    ioc = SoftIoc(records(p), workdir, port).start(probe_pv=f"{p}temp")
    arena = private_name("epv")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    monitors = {n: Monitor(p + n) for n in ("temp", "count", "shutter", "mode", "sample")}
    wait_until("pyepics monitors to connect and see the first values", lambda: all(m.seen for m in monitors.values()))
    path = pipeline(os.path.join(workdir, "bl.lua"), arena, out, p, port)
    run = Supervised(path)
    try:
        wait_until("the EPICS driver to connect its 6 PVs",
                   lambda: key_number(arena, "bl.pvs_connected") == 6 or (run.proc.poll() is not None and run.output()),
                   timeout_s=30)
        assert run.proc.poll() is None, run.output()
        puts = [("temp", 20.5), ("temp", 75.0), ("temp", 95.0), ("temp", 50.0), ("temp", 5.0), ("temp", -7.25),
                ("temp", 33.0)] + [("count", i) for i in range(1, 11)] + \
               [("shutter", 1), ("shutter", 0), ("shutter", 1), ("mode", 1), ("mode", 2), ("mode", 0),
                ("sample", "LaB6 standard"), ("sample", "Si 111")]
        for name, value in puts:
            assert epics.caput(p + name, value, wait=True, timeout=5) == 1, f"caput {p}{name} {value}"
        # The monitors' callbacks come after caput returns: wait for the initial values + every put.
        wait_until(f"pyepics monitors to see the {len(puts)} puts",
                   lambda: sum(len(m.seen) for m in monitors.values()) >= 5 + len(puts))
        expected = sum(len(m.seen) for m in monitors.values())  # initial values + the puts, as pyepics saw them
        wait_until(f"weir's driver to count the {expected} scalar updates pyepics saw (+ waveform frames)",
                   lambda: (key_number(arena, "bl.updates") or 0) >= expected and key_number(arena, "bl.updates"))
        enums = {n: list(monitors[n].pv.get_ctrlvars(timeout=5)["enum_strs"]) for n in ("shutter", "mode")}  # the IOC's own
        metrics = serve_metrics(arena)
        updates = key_number(arena, "bl.updates")
        assert f'weir_epics_pvs_connected{{part="bl"}} 6' in metrics, metrics
        found = re.search(r'weir_epics_updates_total\{part="bl"\} (\d+)', metrics)
        assert found and expected <= int(found.group(1)) <= updates, (found and found.group(0), expected, updates)
        assert 'weir_epics_disconnects_total{part="bl"} 0' in metrics and 'weir_epics_dropped_total{part="bl"} 0' in metrics
        # (the stop publishes the driver's last PV log block; the recorder reads every block before it stops)
    finally:
        rc = run.stop()
        run.close()
        ioc.stop()
    assert rc == 0, run.output()[-3000:]
    runs = runs_in(out, arena)
    assert len(runs) == 1, (runs, os.listdir(out))
    check_run(out, arena, runs[0])
    files = run_files(out, arena, runs[0])
    logs = pv_logs(files)
    for name, m in monitors.items():
        log = logs.get(p + name)
        assert log is not None, f"no NXlog for {p}{name} in {files}; found {sorted(logs)}"
        n = len(m.seen)
        assert len(log["time"]) == n, f"{name}: {len(log['time'])} rows recorded, pyepics saw {n} updates: {m.seen}"
        t = log["time"].astype(np.int64)
        ioc_times = np.array([s[1] for s in m.seen])
        assert np.all(np.abs(t / 1e9 - ioc_times) < 2e-6), f"{name}: times {t} vs the IOC's {ioc_times}"
        values = log["value"]
        if name == "sample":
            got = [text(v).rstrip("\x00") for v in values]
            assert got == [s[0] for s in m.seen], (got, m.seen)
        elif name in ("shutter", "mode"):
            assert [int(v) for v in values] == [int(s[0]) for s in m.seen], (values, m.seen)
            states = [text(v).rstrip("\x00") for v in log["value_string"]]
            enum_strs = enums[name]
            assert states == [enum_strs[int(s[0])] for s in m.seen], (states, enum_strs, m.seen)
            enum = [text(s) for s in log["value_attrs"]["enum_strings"]]
            assert enum[:2] == (["Closed", "Open"] if name == "shutter" else ["Idle", "Ramping"]), enum
        else:
            assert np.array_equal(values, np.array([s[0] for s in m.seen], dtype=values.dtype)), (values, m.seen)
        # the alarm log: a row at each change of (severity, status), the first value's included
        changes, last = [], None
        for s in m.seen:
            if (s[2], s[3]) != last:
                changes.append((s[2], s[3], s[1]))
                last = (s[2], s[3])
        # (each file of a run starts its alarm log with the state then: a repeat at a file boundary)
        rows = list(zip(log["alarm_severity"].tolist(), log["alarm_status"].tolist(), log["alarm_time"].astype(np.int64)))
        got = [r for i, r in enumerate(rows) if i == 0 or r[:2] != rows[i - 1][:2]]
        assert [r[:2] for r in got] == [(c[0], c[1]) for c in changes], f"{name}: alarms {rows}, the IOC's {changes}"
        assert np.all(np.abs(np.array([r[2] for r in got]) / 1e9 - np.array([c[2] for c in changes])) < 2e-6), (got, changes)
        # connected once, never disconnected
        assert log["connection_status"].tolist() == [1], f"{name}: {log['connection_status']}"
    temp = logs[p + "temp"]
    assert text(temp["value_attrs"]["units"]) == "degC"
    sev = [int(s) for s in temp["alarm_severity"]]
    assert 2 in sev and 1 in sev, sev  # MAJOR at 95 and -7.25, MINOR at 75 and 5
    stat = [MENU_ALARM_STAT[int(s)] for s in temp["alarm_status"]]
    assert "HIHI" in stat and "HIGH" in stat and "LOW" in stat and "LOLO" in stat, stat
    assert text(logs[p + "count"]["value_attrs"]["units"]) == "counts"
    remove_arena(arena)


def test_waveform_frames_and_a_disconnect_gap(workdir, ioc_env):
    port = ioc_env
    p = f"W{port}:"
    n = 6000  # 48 kB of f64: over CA's 16 kB default, so EPICS_CA_MAX_ARRAY_BYTES matters on both ends
    ioc = SoftIoc(records(p, n), workdir, port).start(probe_pv=f"{p}temp")
    arena = private_name("ewf")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    path = pipeline(os.path.join(workdir, "wf.lua"), arena, out, p, port, wave_elements=n)
    run = Supervised(path)
    rng = np.random.default_rng(7)
    sent = []
    try:
        wait_until("the EPICS driver to connect its 6 PVs", lambda: key_number(arena, "bl.pvs_connected") == 6, timeout_s=30)
        def synced(value):
            # One IOC, one CA circuit: its updates reach the driver in the order the IOC posted them, so once
            # the driver has this later put of temp, it has had every waveform put before it.
            assert epics.caput(f"{p}temp", value, wait=True, timeout=5) == 1
            wait_until(f"the driver to see temp = {value}", lambda: weir("get", arena, "temp").stdout.strip() == str(value))
        for _ in range(5):
            a = rng.normal(size=n)
            assert epics.caput(f"{p}spectrum", a, wait=True, timeout=5) == 1
            sent.append(a)
        synced(41.5)
        killed = time.time_ns()
        ioc.kill()
        wait_until("the driver to see the disconnect", lambda: (key_number(arena, "bl.disconnects") or 0) >= 6)
        time.sleep(3)
        restarted = time.time_ns()
        ioc.start(probe_pv=f"{p}temp")
        wait_until("the driver to reconnect", lambda: key_number(arena, "bl.pvs_connected") == 6, timeout_s=60)
        for _ in range(3):
            a = rng.normal(size=n)
            assert epics.caput(f"{p}spectrum", a, wait=True, timeout=5) == 1
            sent.append(a)
        synced(42.5)
    finally:
        rc = run.stop()
        run.close()
        ioc.stop()
    assert rc == 0, run.output()[-3000:]
    runs = runs_in(out, arena)
    check_run(out, arena, runs[0])
    data, seqs, flags, times, gaps, names = channel_frames(run_files(out, arena, runs[0]), "bl.spectrum")
    gap_rows = [(int(s), int(b), names[int(r)]) for s, b, r, _ in gaps]
    assert any(r == "disconnected" for _, _, r in gap_rows), gap_rows
    assert [r for r in gap_rows if r[2] == "disconnected"] == [r for r in gap_rows if r[2] == "disconnected"][:1], gap_rows
    frames, frame_times = data[:len(seqs)], times.astype(np.int64)
    # Every put is a frame, in order; a frame's time is the IOC's; none from the 3 s the IOC was away.
    found = [next(i for i, f in enumerate(frames) if np.array_equal(f, a)) for a in sent]
    assert found == sorted(found), found
    assert not np.any((frame_times > killed + 100_000_000) & (frame_times < restarted)), (frame_times, killed, restarted)
    gap_seq = next(s for s, _, r in gap_rows if r == "disconnected")
    assert seqs[found[4]] < gap_seq < seqs[found[5]], (seqs, found, gap_seq)  # between the puts before and after
    remove_arena(arena)


BAD = [
    ('pvs = { "OK:PV", "BAD PV" }', 'PV name "BAD PV" has the character'),
    ('pvs = { "A:B", "A:B" }', 'PV "A:B" is listed twice'),
    ('pvs = { { pv = "A:W", channel = "w" } }', "'elements' is required"),
    ('pvs = { { pv = "A:W", key = "k", elements = 4 } }', "'elements' is for a waveform PV"),
    ('pvs = { }', "'pvs' is required"),
    ('pvs = { "A:B" }, ca = { addr_lst = "x" }', "unknown key 'addr_lst' (did you mean 'addr_list'?)"),
    ('pvs = { "' + "X" * 61 + '" }', "EPICS names have at most 60"),
]


@pytest.mark.parametrize("body,message", BAD)
def test_check_refuses_bad_pv_lists(workdir, body, message):
    path = os.path.join(workdir, "bad.lua")
    with open(path, "w") as f:
        f.write('arena { name = "epicscheck" }\n\n-- the driver\ndriver "epics" { name = "bl", ' + body + ' }\n')
    r = weir("check", path)
    assert r.returncode != 0, r.stdout
    assert f"{path}:4:" in r.stderr and message in r.stderr, r.stderr


def test_each_run_records_every_pv_value_at_its_start(workdir, ioc_env):
    """Under runs = "controlled", a run started by `weir runctl` holds each scalar PV's value at its
    start among its keys_at_start, as the IOC had it then."""
    port = ioc_env
    p = f"S{port}:"
    ioc = SoftIoc(records(p), workdir, port).start(probe_pv=f"{p}temp")
    arena = private_name("erun")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    path = pipeline(os.path.join(workdir, "runs.lua"), arena, out, p, port)
    with open(path) as f:
        text_ = f.read().replace(f'arena {{ name = "{arena}", slots = 512 }}',
                                 f'arena {{ name = "{arena}", slots = 512, runs = "controlled" }}')
    with open(path, "w") as f:
        f.write(text_)
    run = Supervised(path)
    try:
        wait_until("the EPICS driver to connect its 6 PVs", lambda: key_number(arena, "bl.pvs_connected") == 6, timeout_s=30)
        assert epics.caput(f"{p}temp", 61.25, wait=True, timeout=5) == 1
        assert epics.caput(f"{p}sample", "Fe3O4 powder", wait=True, timeout=5) == 1
        wait_until("the driver to see the new values", lambda: weir("get", arena, "sample").stdout.strip() == "Fe3O4 powder"
                   and weir("get", arena, "temp").stdout.strip() == "61.25")
        r = weir("runctl", "start", arena, "--title", "values at start", timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert epics.caput(f"{p}temp", 62.5, wait=True, timeout=5) == 1  # during the run: in the NXlog, not at start
        r = weir("runctl", "stop", arena, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        run.stop()
        run.close()
        ioc.stop()
    runs = runs_in(out, arena)
    assert runs, os.listdir(out)
    files = run_files(out, arena, runs[0])
    with h5py.File(files[0], "r") as f:
        names = [text(n) for n in f["entry/run_control/keys_at_start/name"][:]]
        values = [text(v) for v in f["entry/run_control/keys_at_start/value"][:]]
    at_start = dict(zip(names, values))
    assert float(at_start["temp"]) == 61.25 and at_start["sample"] == "Fe3O4 powder", at_start
    assert at_start.get("temp_units") == "degC", at_start
    remove_arena(arena)
