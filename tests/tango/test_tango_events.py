"""tango "serve": spectra with their axes and the events weir pushes for them, for State and for the
channels, read by Debian's python3-tango from a real `weir run` (a sim driver at 1 kHz, the fft shard's
PSD, an array key written as the mca shard writes its spectrum) on loopback, without a database server
(-nodb -dlist and the file database). Every wait is a deadline poll (serve_fixtures.wait_until)."""
import os
import signal
import sys
import time

import pytest

tango = pytest.importorskip("tango")
np = pytest.importorskip("numpy")

from serve_fixtures import Events, weir, wait_until  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chaos"))
from chaos import parts_of  # noqa: E402

VALID = tango.AttrQuality.ATTR_VALID


@pytest.mark.parametrize("database", ["none", "file"])
def test_spectra_with_axes(served, database):
    s = served(database=database)
    p = s.proxy()
    # The fft shard's PSD: 513 bins of a 1024-point transform at 102.4 kS/s, against the frequency axis
    # of the channel's frame shape (start 0, step 100 Hz), in the channel's units.
    psd = wait_until("adc0_psd valid", lambda: (lambda a: a.quality == VALID and a)(p.read_attribute("adc0_psd")))
    axis = wait_until("adc0_psd_Axis valid", lambda: (lambda a: a.quality == VALID and a)(p.read_attribute("adc0_psd_Axis")))
    assert psd.data_format == tango.AttrDataFormat.SPECTRUM and len(psd.value) == 513 and len(axis.value) == 513
    assert np.allclose(axis.value, np.arange(513) * 100.0)
    c, ca = p.get_attribute_config("adc0_psd"), p.get_attribute_config("adc0_psd_Axis")
    assert (c.unit, ca.unit, ca.label) == ("V^2/Hz", "Hz", "frequency"), (c.unit, ca.unit, ca.label)
    assert axis.value[int(np.argmax(psd.value))] == 1000.0  # the sim's sine
    # An array key (the mca shard's layout): INVALID until written, then the array and its axis key.
    assert p.read_attribute("MCA").quality == tango.AttrQuality.ATTR_INVALID
    mca = Events(p, "MCA")
    spectra = [[0, 5, 9, 2], [1, 6, 9, 2], [1, 6, 10, 4]]
    for counts in spectra:
        assert weir("set", s.arena, "det.spectrum", " ".join(map(str, counts)), "--array", "u32").returncode == 0
        wait_until(f"MCA {counts}", lambda: list(p.read_attribute("MCA").value) == counts)
    # The axis key of another length than the spectrum is not its axis: INVALID; of the same, VALID.
    assert weir("set", s.arena, "det.spectrum_axis", "0.5 1.5", "--array", "f32").returncode == 0
    wait_until("MCA_Axis invalid", lambda: p.read_attribute("MCA_Axis").quality == tango.AttrQuality.ATTR_INVALID)
    assert weir("set", s.arena, "det.spectrum_axis", "0.5 1.5 2.5 3.5", "--array", "f32").returncode == 0
    wait_until("MCA_Axis valid", lambda: p.read_attribute("MCA_Axis").quality == VALID)
    assert list(p.read_attribute("MCA_Axis").value) == [0.5, 1.5, 2.5, 3.5]
    # Every spectrum written was pushed, in order, after the subscription's own read (INVALID then).
    seen = wait_until("3 MCA events", lambda: (lambda v: len(v) >= 4 and v)(mca.values()))
    mca.close()
    assert seen[0][1] == tango.AttrQuality.ATTR_INVALID, seen[0]
    assert [list(v[0]) for v in seen[1:]] == spectra, [(None if v[0] is None else list(v[0]), v[1]) for v in seen]


def test_channel_events_follow_blocks(served):
    s = served(database="none")
    p = s.proxy()
    wait_until("adc0_psd valid", lambda: p.read_attribute("adc0_psd").quality == VALID)
    block, psd = Events(p, "adc0"), Events(p, "adc0_psd")
    # update_hz = 20: each cycle with a new block pushes one event, stamped with the block's time.
    wait_until("40 block and spectrum events", lambda: len(block.values()) >= 40 and len(psd.values()) >= 40, 30)
    block.close()
    psd.close()
    for name, ev in (("adc0", block.values()), ("adc0_psd", psd.values())):
        assert not any(isinstance(e[0], str) for e in ev), (name, ev[:3])
        times = [e[2] for e in ev[1:]]  # after the subscription's own read
        assert all(b > a for a, b in zip(times, times[1:])), (name, times)
        assert all(e[1] == VALID for e in ev), name
    assert all(len(e[0]) == 100 for e in block.values())
    assert all(len(e[0]) == 513 for e in psd.values())


def test_state_events_on_a_stalled_writer(served):
    s = served(database="none")
    p = s.proxy()
    wait_until("State ON", lambda: p.state() == tango.DevState.ON, 30)
    state, rate = Events(p, "State"), Events(p, "adc0_Rate")
    sim = parts_of(s.proc.pid)["driver"]
    assert len(sim) == 1, f"the sim driver's process: {sim}"
    os.kill(sim[0], signal.SIGSTOP)
    try:
        wait_until("State ALARM", lambda: p.state() == tango.DevState.ALARM, 30)
        assert "adc0" in p.status(), p.status()
        wait_until("adc0_Rate ALARM event", lambda: any(e[1] == tango.AttrQuality.ATTR_ALARM for e in rate.values()), 10)
    finally:
        os.kill(sim[0], signal.SIGCONT)
    wait_until("State ON again", lambda: p.state() == tango.DevState.ON, 30)
    states = wait_until("State events ON, ALARM, ON", lambda: (lambda v: len(v) >= 3 and v)(state.values()), 10)
    state.close()
    rate.close()
    assert [e[0] for e in states] == [tango.DevState.ON, tango.DevState.ALARM, tango.DevState.ON], states


@pytest.mark.parametrize("spectra, says", [
    ('{ { channel = "adc0.psd", key = "det.spectrum" } }', "one of 'channel'"),
    ('{ { key = "det.spectrum", axis = "x" } }', "axis"),
    ('{ 3 }', "spectra[1]"),
    ('{ "adc0.psd", { key = "adc0.psd" } }', "served twice"),
    ('{ "adc0" }', "'adc0' holds plain samples"),
])
def test_bad_spectra_refused_by_check(tmp_path, spectra, says):
    p = tmp_path / "bad.lua"
    p.write_text('arena { name = "tgbadspec" }\n'
                 'channel "adc0" { dtype = "f32", rate = 1000, block = 100 }\n'
                 f'tango "serve" {{ device = "weir/daq/1", port = 10000, database = "none",\n  spectra = {spectra} }}\n')
    r = weir("check", p)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"{p}:3" in out and says in out, out



def test_subscriptions_outlive_the_heartbeat_timeout(served):
    """A client's subscription lives on its server's heartbeat: without one for 10 s, libtango reports
    API_EventTimeout and stops the events. Without a database server libtango 9.3 names the heartbeat
    so that no client ever matches it (tango/server/src/nodb_heartbeat.cpp); weir renames it. Both
    database-less modes at once, for 2.5 heartbeat deadlines."""
    runs = [served(database=d) for d in ("none", "file")]
    subs = []
    for s in runs:
        p = s.proxy()
        wait_until("adc0 valid", lambda: p.read_attribute("adc0").quality == VALID)
        subs.append((s, Events(p, "adc0")))
    t0 = time.monotonic()
    wait_until("25 s of events", lambda: time.monotonic() - t0 > 25 and all(len(e.values()) > 0 for _, e in subs), 60, 0.5)
    for s, ev in subs:
        seen = ev.values()
        ev.close()
        errors = [e for e in seen if isinstance(e[0], str)]
        assert not errors, (s.device, errors[:3])
        # A block event each cycle (update_hz = 20), still arriving in the last 2 s, over more than
        # twice the heartbeat deadline.
        stamps = [e[2] for e in seen[1:]]  # after the subscription's own read
        assert time.time() - max(stamps) < 2, (s.device, "no event since", time.time() - max(stamps))
        assert max(stamps) - min(stamps) > 22 and len(stamps) > 22 * 5, (s.device, len(stamps), max(stamps) - min(stamps))
