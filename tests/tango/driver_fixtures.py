"""Shared helpers of the Tango driver's tests and bench: Debian's TangoTest and a PyTango device that
pushes change events at a known rate, each without a database on a loopback port of its own
(-nodb -dlist DEVICE -ORBendPoint giop:tcp:127.0.0.1:PORT), and pipelines with a `driver "tango"`.

Environment (set by tests/tango/CMakeLists.txt): WEIR_CLI (weir), WEIR_TANGO_PROGRAM (weir-tango)."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chaos"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "epics"))

TANGO_TEST = "/usr/lib/tango/TangoTest"
WEIR_TANGO = os.environ.get("WEIR_TANGO_PROGRAM", "")
PYTHON = "/usr/bin/python3"


def require_tango():
    if not WEIR_TANGO or not os.access(WEIR_TANGO, os.X_OK):
        pytest.skip(f"SKIPPED LOUDLY: weir-tango was not built (WEIR_TANGO_PROGRAM={WEIR_TANGO!r})")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, predicate, timeout_s=20.0, every_s=0.05):
    """Polls predicate() until it returns something true; fails naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; last seen: {last!r}")


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Server:
    """A Tango device server process without a database on its own port; kill() and start() keep the port."""

    def __init__(self, argv, port, log, env=None):
        self.argv, self.port, self.log, self.env = argv, port, log, env
        self.proc = None

    def start(self):
        log = open(self.log, "a")
        self.proc = subprocess.Popen(self.argv + ["-ORBendPoint", f"giop:tcp:127.0.0.1:{self.port}"], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        wait_until(f"{os.path.basename(self.argv[0])} to listen on port {self.port}",
                   lambda: port_open(self.port) or (self.proc.poll() is not None and self._died()), timeout_s=30)
        return self

    def _died(self):
        raise AssertionError(f"{self.argv} exited ({self.proc.returncode}):\n{open(self.log).read()[-3000:]}")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    stop = kill


def tango_test(workdir, port=None, device="sys/tg_test/1"):
    """Debian's TangoTest serving `device` without a database."""
    port = port or free_port()
    return Server([TANGO_TEST, "test", "-nodb", "-dlist", device], port, os.path.join(workdir, f"tangotest-{port}.log"))


EVENT_DEVICE = r'''
"""A device that pushes change events itself: `value` (DevDouble, units mm) at RATE Hz counting up from
START, every 7th ALARM and every 11th WARNING quality; `spectrum` (16 DevDouble) every 10th value. Each
push is appended to LOG as "value time quality" (spectra as "S first time")."""
import os, threading, time
import numpy as np
from tango import AttrQuality, AttrWriteType
from tango.server import Device, attribute, run

RATE = float(os.environ["EVDEV_RATE"])
START = int(os.environ.get("EVDEV_START", "0"))
LOG = os.environ["EVDEV_LOG"]
COUNT = int(os.environ.get("EVDEV_COUNT", "0"))  # 0: until killed
ATTRS = int(os.environ.get("EVDEV_ATTRS", "1"))  # value, value1, ... (the bench's devices)


def quality_of(i):
    return AttrQuality.ATTR_ALARM if i % 7 == 3 else AttrQuality.ATTR_WARNING if i % 11 == 5 else AttrQuality.ATTR_VALID


class EventDevice(Device):
    value = attribute(dtype=float, unit="mm", access=AttrWriteType.READ)
    spectrum = attribute(dtype=(float,), max_dim_x=16, access=AttrWriteType.READ)

    def init_device(self):
        super().init_device()
        self.last = (float(START), time.time(), AttrQuality.ATTR_VALID)
        with open(LOG, "a") as log:  # the value a subscription's first read finds before any push
            log.write(f"{START} {self.last[1]!r} 0\n")
        self.last_spectrum = (np.full(16, float(START)), time.time())
        self.names = ["value"] + [f"value{k}" for k in range(1, ATTRS)]
        for k in range(1, ATTRS):
            self.add_attribute(tango_attr(f"value{k}"), self.read_extra)
        for name in self.names + ["spectrum"]:
            self.set_change_event(name, True, False)
        threading.Thread(target=self.pusher, daemon=True).start()

    def read_value(self, attr):
        attr.set_value_date_quality(*self.last)

    def read_extra(self, attr):
        attr.set_value_date_quality(*self.last)

    def read_spectrum(self, attr):
        attr.set_value_date_quality(self.last_spectrum[0], self.last_spectrum[1], AttrQuality.ATTR_VALID)

    def pusher(self):
        period = 1.0 / RATE
        i, t_next = START, time.monotonic() + 0.5
        with open(LOG, "a", buffering=1) as log:
            while COUNT == 0 or i < START + COUNT:
                t_next += period
                delay = t_next - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                i += 1
                t, q = time.time(), quality_of(i)
                self.last = (float(i), t, q)
                for name in self.names:
                    self.push_change_event(name, float(i), t, q)
                log.write(f"{i} {t!r} {int(q)}\n")
                if i % 10 == 0:
                    a = np.arange(16, dtype=float) + i
                    self.last_spectrum = (a, t)
                    self.push_change_event("spectrum", a, t, AttrQuality.ATTR_VALID)
                    log.write(f"S {i} {t!r}\n")


def tango_attr(name):
    from tango import Attr, CmdArgType
    return Attr(name, CmdArgType.DevDouble, AttrWriteType.READ)


if __name__ == "__main__":
    run((EventDevice,))
'''


def event_device(workdir, rate, port=None, device="test/evt/1", start=0, count=0, attrs=1, tango_host=None,
                 instance="evdev"):
    """The PyTango event device at `rate` pushes/s; its pushes are logged to the returned server's `.pushes`.
    Without a database (-nodb -dlist), or registered in the Tango database at `tango_host` as
    event_device/<instance> (tango_database.TangoDatabase.add_server)."""
    port = port or free_port()
    script = os.path.join(workdir, "event_device.py")
    with open(script, "w") as f:
        f.write(EVENT_DEVICE)
    pushes = os.path.join(workdir, f"pushes-{port}.log")
    env = dict(os.environ, EVDEV_RATE=str(rate), EVDEV_START=str(start), EVDEV_LOG=pushes, EVDEV_COUNT=str(count),
               EVDEV_ATTRS=str(attrs))
    if tango_host:
        env["TANGO_HOST"] = tango_host
    argv = [PYTHON, script, instance] + ([] if tango_host else ["-nodb", "-dlist", device])
    server = Server(argv, port, os.path.join(workdir, f"evdev-{port}.log"), env)
    server.pushes = pushes
    return server


def read_pushes(path):
    """([(value, time_s, quality)], [(first, time_s)]) as the event device logged its pushes."""
    values, spectra = [], []
    if not os.path.exists(path):
        return values, spectra
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] == "S":
            spectra.append((int(f[1]), float(f[2])))
        elif len(f) == 3:
            values.append((int(f[0]), float(f[1]), int(f[2])))
    return values, spectra


def key_number(weir, arena, key):
    r = weir("get", arena, key)
    try:
        return int(float(r.stdout.strip())) if r.returncode == 0 else None
    except ValueError:
        return None
