"""weir on a Tango facility's own database (TANGO_HOST), as in production: a private Tango database
(MariaDB and Debian's DataBaseds, tango_database.py) on loopback. weir's device server registered with
tango_admin, found through the database by python3-tango, its events still arriving after the heartbeat
deadline; driver "tango" reading a PyTango device registered there, every pushed value recorded.
Without mariadb-server or tango-db each test is skipped, saying so."""
import os
import shutil
import tempfile
import time

import numpy as np
import pytest

tango = pytest.importorskip("tango")

from driver_fixtures import event_device, key_number, require_tango  # noqa: E402
from serve_fixtures import Events, wait_until  # noqa: E402
from tango_database import TangoDatabase  # noqa: E402
from chaos import Supervised, private_name, remove_arena, weir  # noqa: E402
from epics_files import pv_logs  # noqa: E402
from ledger_check import check_run, run_files, runs_in  # noqa: E402

VALID = tango.AttrQuality.ATTR_VALID


@pytest.fixture(scope="module")
def tango_db():
    if not TangoDatabase.available():
        pytest.skip("SKIPPED LOUDLY: no Tango database here (Debian: mariadb-server, tango-db; scripts/deps.sh test)")
    with TangoDatabase() as db:
        yield db


def test_server_registered_in_the_database(served, tango_db):
    s = served(database="tango", tango_db=tango_db)
    p = s.proxy()
    assert tango_db.admin("--check-device", s.device, check=False).returncode == 0
    wait_until("adc0_Rate valid", lambda: p.read_attribute("adc0_Rate").quality == VALID)
    assert p.get_attribute_config("adc0_Rate").unit == "S/s"
    assert p.StartRun(["through the database"]) == 1
    wait_until("RunState Running", lambda: p.RunState == "Running")
    # Past the heartbeat deadline (10 s): the subscription still delivers.
    ev = Events(p, "adc0")
    t0 = time.monotonic()
    wait_until("15 s of events", lambda: time.monotonic() - t0 > 15 and len(ev.values()) > 0, 40, 0.5)
    seen = ev.values()
    ev.close()
    assert not [e for e in seen if isinstance(e[0], str)], seen[:3]
    stamps = [e[2] for e in seen[1:]]  # after the subscription's own read
    assert time.time() - max(stamps) < 2 and max(stamps) - min(stamps) > 13, (len(seen), min(stamps), max(stamps))
    line = p.StopRun()
    assert line.startswith("run 1 stopped") and "0 lost" in line, line
    assert weir("audit", "--all-runs", s.out).returncode == 0
    assert s.stop() == 0


def test_driver_through_the_database(tango_db):
    require_tango()
    work = tempfile.mkdtemp(prefix="weir-tango-db-")
    tango_db.add_server("event_device/evdev", "EventDevice", ["test/evt/db"])
    dev = event_device(work, rate=50, device="test/evt/db", tango_host=tango_db.tango_host).start()
    arena = private_name("tgdb")
    out = os.path.join(work, "rec")
    os.makedirs(out)
    path = os.path.join(work, "db.lua")
    with open(path, "w") as f:
        f.write(f'arena {{ name = "{arena}", slots = 512 }}\n'
                f'driver "tango" {{ name = "ev", host = "{tango_db.tango_host}", flush_ms = 50,\n'
                '  attributes = { { attribute = "test/evt/db/value", key = "ev.value" } } }\n'
                f'record "hdf5" {{ channels = {{ "ev.*" }}, out = "{out}", flush_ms = 200 }}\n')
    run = Supervised(path)
    try:
        wait_until("the driver to connect", lambda: key_number(weir, arena, "ev.pvs_connected") == 1, timeout_s=30)
        connected = time.monotonic()
        wait_until("15 s connected", lambda: time.monotonic() - connected > 15, 30, 0.5)
        assert key_number(weir, arena, "ev.disconnects") in (None, 0)
        assert key_number(weir, arena, "ev.dropped") in (None, 0)
    finally:
        rc = run.stop()
        run.close()
        dev.stop()
    assert rc == 0, run.output()[-3000:]
    runs = runs_in(out, arena)
    check_run(out, arena, runs[0])
    log = pv_logs(run_files(out, arena, runs[0]))["test/evt/db/value"]
    values, times = log["value"].astype(np.int64), log["time"].astype(np.int64)
    # Events kept arriving past the heartbeat deadline (12 s after the subscription without one): an
    # unbroken run of the device's counter whose stamps span more than 13 s (the first entry is the
    # subscription's own read; a busy machine may push slower than 50 Hz, never with a hole).
    span_s = (times[-1] - times[1]) / 1e9
    assert span_s > 13, (span_s, len(values))
    assert np.all(np.diff(values[1:]) == 1), values[:20]
    remove_arena(arena)
    shutil.rmtree(work, ignore_errors=True)
