"""Shared helpers of tests/tango/test_tango_serve.py: deadline polls, free ports, and `Served`, one
`weir run` of a pipeline with a tango "serve" part on loopback (the file database, no database server)."""
import itertools
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

WEIR = os.environ.get("WEIR_CLI", "weir")
_serial = itertools.count()

PIPELINE = """
arena {{ name = "{arena}", channels = 4, channel_mb = 16, consumers = 8, runs = "controlled" }}
channel "adc0" {{ dtype = "f32", rate = 102400, block = 1024, ring = 256 }}
driver "sim" {{ channels = {{"adc0"}}, signal = "sine", frequency = 1000 }}
shard "fft" {{ input = "adc0", size = 1024, window = "hann", spectrum = "psd" }}
record "hdf5" {{ channels = {{"adc0"}}, out = "{out}", flush_ms = 200 }}
tango "serve" {{
  device = "{device}", database = "{database}", host = "127.0.0.1", port = {port},
  keys = {{ "shots", {{ key = "psu.setpoint", writable = true, units = "V", format = "%.3f", min = 0, max = 10,
            abs_change = 0.5 }} }},
  channels = {{ {{ channel = "adc0", elements = 100 }}, {{ channel = "adc0", attribute = "adc0env", mode = "envelope", elements = 50 }} }},
  spectra = {{ "adc0.psd", {{ key = "det.spectrum", attribute = "MCA" }} }},
  update_hz = 20, stall_s = 1
}}
"""


def wait_until(what, predicate, timeout_s=20.0, every_s=0.05):
    """Polls predicate() until it returns something true; fails naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as e:  # noqa: BLE001 - a client not connected yet: polled again
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; last seen: {last!r}")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def weir(*args, timeout=60, **kw):
    return subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=timeout, **kw)


class Served:
    """One `weir run` of PIPELINE in its own session; `proxy()` is a DeviceProxy of its device."""

    def __init__(self, workdir, database="file", tango_db=None):
        n = next(_serial)
        self.arena = f"tgsrv{os.getpid()}x{n}"
        self.device = f"weir/test/{os.getpid()}x{n}"
        self.port = free_port()
        self.out = Path(workdir) / f"out{n}"
        self.path = Path(workdir) / f"{self.arena}.lua"
        self.path.write_text(PIPELINE.format(arena=self.arena, out=self.out, device=self.device, port=self.port,
                                             database=database))
        self.log_path = self.path.with_suffix(".log")
        self._log = open(self.log_path, "w")
        env = None
        self.url = f"tango://127.0.0.1:{self.port}/{self.device}#dbase=no"
        if database == "tango":  # registered first, as tango_admin --add-server does it on a facility
            tango_db.add_server("weir-tango/tango", "WeirDevice", [self.device])
            env = tango_db.env()
            self.url = f"tango://{tango_db.tango_host}/{self.device}"
        self.proc = subprocess.Popen([WEIR, "run", str(self.path), "--status-every", "0"], stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True, env=env)
        wait_until(f"weir-tango to serve {self.url}:\n{self.output()}",
                   lambda: self.alive() and str(self.proxy().RunState) == "Idle", 60)

    def proxy(self):
        import tango
        p = tango.DeviceProxy(self.url)
        p.set_timeout_millis(40000)  # StopRun returns once the recorders closed the run's files
        return p

    def output(self):
        return self.log_path.read_text(errors="replace")[-4000:]

    def alive(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"weir run exited ({self.proc.returncode}):\n{self.output()}")
        return True

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
                raise AssertionError(f"weir run did not stop within 60 s of SIGINT:\n{self.output()}")
        return self.proc.returncode

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._log.close()
        weir("rm", self.arena, "--force")


class Events:
    """Change events of one attribute, as the client's callback saw them: (value, quality, time) or an
    error's reason, in arrival order."""

    def __init__(self, proxy, attribute, kind=None):
        import tango
        kind = tango.EventType.CHANGE_EVENT if kind is None else kind
        self.seen = []
        self.repeats = 0
        self._lock = threading.Lock()
        self._proxy = proxy
        self._id = proxy.subscribe_event(attribute, kind, self._on)

    def _on(self, ev):
        with self._lock:
            if ev.err:
                self.seen.append(("error", ev.errors[0].reason))
                return
            v = ev.attr_value
            value = v.value.copy() if isinstance(v.value, np.ndarray) else v.value
            e = (value, v.quality, v.time.totime())
            # libtango 9.3's client, talking to a server without a database, hands the first pushed
            # event after a subscription to the callback twice (the server pushed it once: same stamp,
            # same value). A repeat of the event just before it, stamp included, is that delivery.
            if self.seen and self.seen[-1][2] == e[2] and self.seen[-1][1] == e[1] and np.array_equal(self.seen[-1][0], e[0]):
                self.repeats += 1
                return
            self.seen.append(e)

    def values(self):
        with self._lock:
            return list(self.seen)

    def close(self):
        self._proxy.unsubscribe_event(self._id)
