"""driver "tango" against Debian's TangoTest (its attributes push no events without polling: the
driver reads them at poll_ms) and against a PyTango device that pushes change events at a known rate:
every pushed value is in the recording with the device's time stamp and quality, in order; the device
killed and restarted is a disconnect in the attribute log with no value in it, and updates resume;
`weir check` refuses bad attribute lists naming file and line."""
import os
import shutil
import tempfile
import time

import numpy as np
import pytest

from driver_fixtures import event_device, key_number, read_pushes, require_tango, tango_test, wait_until
from chaos import Supervised, private_name, remove_arena, weir
from epics_files import channel_frames, pv_logs, text
from ledger_check import check_run, run_files, runs_in

SEVERITY = {0: 0, 1: 3, 2: 2, 3: 0, 4: 1}  # Tango quality -> the log's severity (tango/README.md)


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="weir-tango-drv-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def write(path, text_):
    with open(path, "w") as f:
        f.write(text_)
    return path


def test_tangotest_by_polling(workdir):
    require_tango()
    tt = tango_test(workdir).start()
    arena = private_name("tgp")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    path = write(os.path.join(workdir, "tt.lua"), f"""
arena {{ name = "{arena}", slots = 512 }}
driver "tango" {{ name = "tg", host = "127.0.0.1:{tt.port}", database = false, flush_ms = 50, poll_ms = 100,
  attributes = {{ "sys/tg_test/1/double_scalar", {{ attribute = "sys/tg_test/1/long_scalar", key = "tg.long", poll_ms = 50 }},
                 "sys/tg_test/1/State", "sys/tg_test/1/string_scalar",
                 {{ attribute = "sys/tg_test/1/double_spectrum_ro", channel = "tg.spec", elements = 256 }} }} }}
record "hdf5" {{ channels = {{ "tg.*" }}, out = "{out}", flush_ms = 200 }}
""")
    run = Supervised(path)
    try:
        wait_until("the driver to connect TangoTest's 5 attributes", lambda: key_number(weir, arena, "tg.pvs_connected") == 5,
                   timeout_s=30)
        wait_until("40 updates", lambda: (key_number(weir, arena, "tg.updates") or 0) >= 40, timeout_s=30)
        assert key_number(weir, arena, "tg.polled") == 5
        assert weir("get", arena, "sys/tg_test/1/State_state").stdout.strip() == "RUNNING"
        assert weir("get", arena, "sys/tg_test/1/string_scalar").stdout.strip() == "Default string"
    finally:
        rc = run.stop()
        run.close()
        tt.stop()
    assert rc == 0, run.output()[-3000:]
    runs = runs_in(out, arena)
    check_run(out, arena, runs[0])
    files = run_files(out, arena, runs[0])
    logs = pv_logs(files)
    for name in ("double_scalar", "long_scalar", "State", "string_scalar"):
        log = logs.get(f"sys/tg_test/1/{name}")
        assert log is not None and len(log["time"]) >= 2, (name, sorted(logs))
        t = log["time"].astype(np.int64)
        assert np.all(np.diff(t) > 0), f"{name}: the device's time stamps, each read once: {t}"
        assert log["connection_status"].tolist()[:1] == [1]
    assert len(logs["sys/tg_test/1/long_scalar"]["time"]) > len(logs["sys/tg_test/1/double_scalar"]["time"])
    data = channel_frames(files, "tg.spec")
    assert data is not None and len(data[1]) >= 2
    remove_arena(arena)


def pipeline(path, arena, out, port):
    return write(path, f"""
arena {{ name = "{arena}", slots = 512 }}
driver "tango" {{ name = "ev", host = "127.0.0.1:{port}", database = false, flush_ms = 50, ping_ms = 200,
  attributes = {{ {{ attribute = "test/evt/1/value", key = "ev.value" }},
                 {{ attribute = "test/evt/1/spectrum", channel = "ev.spectrum", elements = 16 }} }} }}
record "hdf5" {{ channels = {{ "ev.*" }}, keys = {{ "ev.value" }}, out = "{out}", flush_ms = 200 }}
""")


def test_pushed_events_recorded_and_a_restart_logged(workdir):
    require_tango()
    dev = event_device(workdir, rate=100).start()
    arena = private_name("tge")
    out = os.path.join(workdir, "rec")
    os.makedirs(out)
    run = Supervised(pipeline(os.path.join(workdir, "ev.lua"), arena, out, dev.port))
    try:
        wait_until("the driver to connect both attributes", lambda: key_number(weir, arena, "ev.pvs_connected") == 2,
                   timeout_s=30)
        wait_until("300 updates", lambda: (key_number(weir, arena, "ev.updates") or 0) >= 300, timeout_s=30)
        dev.kill()
        killed = time.time_ns()
        wait_until("the disconnect", lambda: (key_number(weir, arena, "ev.disconnects") or 0) >= 2, timeout_s=30)
        before = read_pushes(dev.pushes)[0]
        restarted = time.time_ns()
        dev.start()
        wait_until("the driver to reconnect", lambda: key_number(weir, arena, "ev.pvs_connected") == 2, timeout_s=60)
        after_connect = len(read_pushes(dev.pushes)[0])
        wait_until("200 pushes after the reconnection", lambda: len(read_pushes(dev.pushes)[0]) >= after_connect + 200,
                   timeout_s=30)
        dev.kill()
        wait_until("the second disconnect", lambda: key_number(weir, arena, "ev.pvs_connected") == 0, timeout_s=30)
        assert key_number(weir, arena, "ev.dropped") == 0
    finally:
        rc = run.stop()
        run.close()
        dev.stop()
    assert rc == 0, run.output()[-3000:]
    pushed, spectra = read_pushes(dev.pushes)
    first_life = pushed[:len(before)]
    second_life = pushed[len(before):]
    runs = runs_in(out, arena)
    check_run(out, arena, runs[0])
    files = run_files(out, arena, runs[0])
    log = pv_logs(files)["test/evt/1/value"]
    assert text(log["value_attrs"]["units"]) == "mm"
    values, times = log["value"], log["time"].astype(np.int64)
    # The connection log: connected, disconnected (the kill), connected (the restart), disconnected.
    status, status_t = log["connection_status"].tolist(), log["connection_status_time"].astype(np.int64)
    assert status[:4] == [1, 0, 1, 0], status
    assert killed < status_t[1] < restarted < status_t[2], (killed, status_t, restarted)
    # No value while the device was down (a value's time is the device's own stamp: the restarted
    # device's first value may be stamped before the driver is back).
    assert not np.any((times > killed) & (times < restarted)), "a value while the device was down"
    between = (log["time"].astype(np.int64) > status_t[1]) & (log["time"].astype(np.int64) < restarted)
    assert not np.any(between), "a value after the disconnect entry, before the restart"
    # Every value pushed while the driver was subscribed is recorded once, in order, with its time stamp.
    assert first_life and second_life, "the device pushed nothing"
    recorded = list(zip(values.astype(np.int64).tolist(), times.tolist()))
    # (Tango carries a time stamp in microseconds: a pushed float second matches to 2 us.)
    for life in (first_life, second_life):
        t_life = np.array([p[1] * 1e9 for p in life])
        mine = [(v, t) for v, t in recorded if t_life[0] - 2000 <= t <= t_life[-1] + 2000]
        assert mine, "nothing recorded of one of the device's lives"
        # The first is the subscription's own read; a push between that read and the subscription taking
        # effect is Tango's to lose. From the first event on, every push is recorded.
        mine = mine[1:]
        start = int(np.argmin(np.abs(t_life - mine[0][1])))
        expected = life[start:]
        assert len(mine) == len(expected), f"pushed {len(expected)} from the first recorded on, recorded {len(mine)}"
        for (v, t), p in zip(mine, expected):
            assert v == p[0] and abs(t - p[1] * 1e9) < 2000, ((v, t), p)
    sev = dict(zip(log["alarm_time"].astype(np.int64).tolist(), log["alarm_severity"].tolist()))
    push_t = np.array([p[1] * 1e9 for p in pushed])
    seen = set()
    for t, s in sev.items():
        i = int(np.argmin(np.abs(push_t - t)))
        assert abs(push_t[i] - t) < 2000 and s == SEVERITY[pushed[i][2]], (t, s, pushed[i])
        seen.add(s)
    assert seen >= {0, 1, 2}, seen
    # The spectrum: frames in order, a `disconnected` gap between the lives.
    data, seqs, _, ftimes, gaps, names = channel_frames(files, "ev.spectrum")
    assert any(names[int(r)] == "disconnected" for _, _, r, _ in gaps), gaps
    firsts = [int(row[0]) for row in data[:len(seqs)]]
    assert len(firsts) >= 10, firsts
    # (each life starts with the device's initial spectrum, 16 x its START value 0)
    assert all(np.array_equal(row, np.arange(16) + row[0]) or not row.any() for row in data[:len(seqs)])
    assert all(f in {s[0] for s in spectra} or f == 0 for f in firsts), firsts
    remove_arena(arena)


BAD = [
    ('attributes = { "sys/tg_test/double_scalar" }', 'is not domain/family/member/attribute'),
    ('attributes = { "sys/tg test/1/double_scalar" }', "has the character ' '"),
    ('attributes = { "a/b/c/x", "a/b/c/x" }', 'is listed twice'),
    ('attributes = { { attribute = "a/b/c/s", channel = "s" } }', "'elements' is required"),
    ('attributes = { { attribute = "a/b/c/x", key = "k", elements = 4 } }', "'elements' is for a spectrum"),
    ('attributes = { }', "'attributes' is empty"),
    ('host = "nohost", attributes = { "a/b/c/x" }', "is not HOST:PORT"),
    ('attributes = { "a/b/c/x" }, pol_ms = 5', "unknown key 'pol_ms'"),
]


@pytest.mark.parametrize("body,message", BAD)
def test_check_refuses_bad_attribute_lists(workdir, body, message):
    path = write(os.path.join(workdir, "bad.lua"),
                 'arena { name = "tangocheck" }\n\n-- the driver\ndriver "tango" { name = "tg", ' + body + ' }\n')
    r = weir("check", path)
    assert r.returncode != 0, r.stdout
    assert f"{path}:4:" in r.stderr and message in r.stderr, r.stderr
