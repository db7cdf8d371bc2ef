"""tango "serve": weir's status, keys, channels and runs as attributes and commands of a Tango device
served by weir-tango, started by a real `weir run` (a sim driver, an HDF5 recorder), on loopback without
a database server. Read by Debian's python3-tango (DeviceProxy): every attribute with its type, units
and quality; change and archive events pushed by weir; StartRun/StopRun as `weir runctl` makes runs;
refusals as DevFailed. Every wait is a deadline poll (serve_fixtures.wait_until)."""

import pytest

tango = pytest.importorskip("tango")

from serve_fixtures import Events, weir, wait_until  # noqa: E402

STATUS = {"adc0_Rate": (tango.CmdArgType.DevDouble, "S/s"), "adc0_Lost": (tango.CmdArgType.DevLong64, "blocks"),
          "adc0_Dropped": (tango.CmdArgType.DevLong64, "blocks"), "adc0_Lag": (tango.CmdArgType.DevLong64, "blocks"),
          "DiskFree": (tango.CmdArgType.DevDouble, "B"), "Part_sim_State": (tango.CmdArgType.DevString, ""),
          "Part_record_Restarts": (tango.CmdArgType.DevLong64, ""), "RunState": (tango.CmdArgType.DevString, ""),
          "RunNumber": (tango.CmdArgType.DevLong64, ""), "NumCaptured": (tango.CmdArgType.DevLong64, "blocks")}


def test_bad_device_name_refused_by_check(tmp_path):
    p = tmp_path / "bad.lua"
    p.write_text('arena { name = "tgbad" }\ntango "serve" {\n  device = "weir/daq", port = 10000, database = "none" }\n')
    r = weir("check", p)
    assert r.returncode != 0
    assert f"{p}:2" in r.stderr + r.stdout and "weir/daq" in r.stderr + r.stdout, r.stderr + r.stdout


@pytest.mark.parametrize("database", ["file", "none"])
def test_attributes_types_units_quality(served, database):
    s = served(database=database)
    p = s.proxy()
    wait_until("adc0_Rate valid", lambda: p.read_attribute("adc0_Rate").quality == tango.AttrQuality.ATTR_VALID)
    for name, (kind, units) in STATUS.items():
        a = p.read_attribute(name)
        assert a.type == kind, name
        assert p.get_attribute_config(name).unit == units, name
    # The rate comes from the blocks' stamps: it needs a few blocks (0 right after the first one).
    rate = wait_until("adc0_Rate within 10 % of 102400 S/s",
                      lambda: (lambda v: abs(v - 102400) < 10240 and v)(p.read_attribute("adc0_Rate").value))
    assert rate == pytest.approx(102400, rel=0.1)
    # A key not there yet is INVALID; once written it is VALID with its type, units and format.
    assert p.read_attribute("psu_setpoint").quality == tango.AttrQuality.ATTR_INVALID
    assert weir("set", s.arena, "psu.setpoint", "2.5", "--type", "f64").returncode == 0
    a = wait_until("psu_setpoint 2.5", lambda: (lambda a: a.quality == tango.AttrQuality.ATTR_VALID and a)(p.read_attribute("psu_setpoint")))
    assert a.value == 2.5 and a.type == tango.CmdArgType.DevDouble
    c = p.get_attribute_config("psu_setpoint")
    assert (c.unit, c.format, c.writable) == ("V", "%.3f", tango.AttrWriteType.READ_WRITE)
    # Channels: the newest block and an envelope as SPECTRUMs of doubles.
    w = p.read_attribute("adc0")
    assert w.data_format == tango.AttrDataFormat.SPECTRUM and len(w.value) == 100 and max(abs(w.value)) <= 1.0001
    # The envelope has a point per bucket once the ring holds enough blocks.
    wait_until("a full envelope", lambda: len(p.read_attribute("adc0env_Min").value) == 50)
    lo, hi = p.read_attribute("adc0env_Min").value, p.read_attribute("adc0env_Max").value
    assert len(lo) == 50 and min(lo) == pytest.approx(-1, abs=0.01) and max(hi) == pytest.approx(1, abs=0.01)
    assert p.state() == tango.DevState.ON, p.status()


def test_writes_and_refusals(served):
    s = served()
    p = s.proxy()
    assert weir("set", s.arena, "psu.setpoint", "1", "--type", "f64").returncode == 0
    wait_until("psu_setpoint 1", lambda: p.psu_setpoint == 1)
    p.write_attribute("psu_setpoint", 7.25)
    r = wait_until("the key written", lambda: (lambda r: "7.25" in r.stdout and r)(weir("get", s.arena, "psu.setpoint")))
    assert r.returncode == 0
    with pytest.raises(tango.DevFailed) as e:  # outside min/max: Tango's own refusal
        p.write_attribute("psu_setpoint", 11.0)
    assert "psu_setpoint" in e.value.args[0].desc
    with pytest.raises(tango.DevFailed) as e:
        p.write_attribute("adc0_Rate", 3.0)
    assert e.value.args[0].reason == "API_AttrNotWritable" and "adc0_Rate" in e.value.args[0].desc


@pytest.mark.parametrize("database", ["file", "none"])
def test_change_and_archive_events_in_order(served, database):
    s = served(database=database)
    p = s.proxy()
    assert weir("set", s.arena, "psu.setpoint", "0", "--type", "f64").returncode == 0
    wait_until("psu_setpoint 0", lambda: p.psu_setpoint == 0)
    got = {k: Events(p, "psu_setpoint", k) for k in (tango.EventType.CHANGE_EVENT, tango.EventType.ARCHIVE_EVENT)}
    # Steps of 1 (>= abs_change 0.5) are each an event; a step of 0.25 after them is not.
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    for v in values:
        assert weir("set", s.arena, "psu.setpoint", v, "--type", "f64").returncode == 0
        wait_until(f"psu_setpoint {v}", lambda: p.psu_setpoint == v)
    assert weir("set", s.arena, "psu.setpoint", 5.25, "--type", "f64").returncode == 0
    wait_until("psu_setpoint 5.25", lambda: p.psu_setpoint == 5.25)
    for k, ev in got.items():
        wait_until(f"{k} events", lambda: len(ev.values()) >= 1 + len(values), 10)
        ev.close()
    for k, ev in got.items():
        # The first is the subscription's own read; then every pushed value, in order, none invented.
        assert [e[0] for e in ev.values()] == [0.0] + values, (k, ev.values())


def test_runs_like_runctl(served):
    s = served()
    p = s.proxy()
    number = p.StartRun(["tango title", "ada", "sample-1", "a comment"])
    assert number == 1
    wait_until("RunState Running", lambda: p.RunState == "Running")
    assert (p.RunTitle, p.RunOperator, p.RunSample, p.RunComment) == ("tango title", "ada", "sample-1", "a comment")
    wait_until("State RUNNING", lambda: p.state() == tango.DevState.RUNNING)
    with pytest.raises(tango.DevFailed) as e:
        p.StartRun(["again"])
    assert e.value.args[0].reason == "WEIR_RUN_REFUSED" and "run 1" in e.value.args[0].desc
    assert p.RunState == "Running" and p.RunNumber == 1  # untouched
    wait_until("blocks recorded", lambda: p.NumCaptured > 10)
    line = p.StopRun()
    assert line.startswith("run 1 stopped") and "0 lost" in line, line
    assert p.RunState == "Idle"
    with pytest.raises(tango.DevFailed) as e:
        p.StopRun()
    assert e.value.args[0].reason == "WEIR_RUN_REFUSED"
    # The same run as weir runctl makes: its row in the run log (door tango), its files audited.
    r = weir("runs", "ls", s.out, "--json")
    assert r.returncode == 0, r.stderr
    assert '"door":"tango"' in r.stdout.replace(" ", "") and "tango title" in r.stdout, r.stdout
    r = weir("audit", "--all-runs", s.out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert s.stop() == 0
