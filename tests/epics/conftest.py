"""Shared fixtures of the EPICS tests: EPICS base's own tools (softIoc, caget, camonitor, pvget) on
loopback ports of their own, and the weir and weir-epics programs under test.

Environment (set by tests/epics/CMakeLists.txt): WEIR_CLI (weir), WEIR_EPICS_PROGRAM (weir-epics),
EPICS_BASE (the base weir-epics was built with). Without EPICS base the tests skip, saying why."""
import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

EPICS_BASE = os.environ.get("EPICS_BASE", "")
ARCH = "linux-x86_64"
WEIR = os.environ.get("WEIR_CLI", "")
WEIR_EPICS = os.environ.get("WEIR_EPICS_PROGRAM", "")


def epics_bin(name):
    return os.path.join(EPICS_BASE, "bin", ARCH, name)


def require_epics():
    if not EPICS_BASE or not os.access(epics_bin("softIoc"), os.X_OK):
        pytest.skip(f"SKIPPED LOUDLY: no EPICS base with softIoc (EPICS_BASE={EPICS_BASE!r}); "
                    "scripts/epics_base.sh builds one and scripts/test.sh passes it")
    if not WEIR_EPICS or not os.access(WEIR_EPICS, os.X_OK):
        pytest.skip(f"SKIPPED LOUDLY: weir-epics was not built (WEIR_EPICS_PROGRAM={WEIR_EPICS!r})")


def free_port():
    """A port free for TCP and UDP on loopback (CA's server uses the same number for both), whose
    next port is free for UDP too (the tests' caRepeater takes it)."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
        if port >= 65535:
            continue
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, \
                    socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as r:
                u.bind(("127.0.0.1", port))
                r.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port")


_repeaters = {}


def ensure_repeater(port, env):
    """A caRepeater on `port`, started here with its output discarded: a CA client that finds none
    starts one itself, and that one would inherit (and hold open) the client's stdout and stderr."""
    if port in _repeaters and _repeaters[port].poll() is None:
        return
    _repeaters[port] = subprocess.Popen([epics_bin("caRepeater")], env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@atexit.register
def _stop_repeaters():
    for p in _repeaters.values():
        if p.poll() is None:
            p.kill()


def ca_env(server_port, repeater_port=None, extra=None):
    """The environment of a CA client or server on loopback at server_port (no broadcast search),
    with a caRepeater of its own running."""
    env = dict(os.environ)
    env["PATH"] = os.path.join(EPICS_BASE, "bin", ARCH) + os.pathsep + env.get("PATH", "")
    env["EPICS_CA_SERVER_PORT"] = str(server_port)
    env["EPICS_CA_ADDR_LIST"] = "127.0.0.1"
    env["EPICS_CA_AUTO_ADDR_LIST"] = "NO"
    env["EPICS_CA_REPEATER_PORT"] = str(repeater_port or server_port + 1)
    env["EPICS_CAS_INTF_ADDR_LIST"] = "127.0.0.1"
    env["EPICS_CA_MAX_ARRAY_BYTES"] = "10000000"
    env["EPICS_PVA_ADDR_LIST"] = "127.0.0.1"
    env["EPICS_PVA_AUTO_ADDR_LIST"] = "NO"
    if extra:
        env.update(extra)
    if EPICS_BASE:
        ensure_repeater(int(env["EPICS_CA_REPEATER_PORT"]), env)
    return env


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


def caget(env, pv, *args, timeout_s=5.0):
    """caget's answer (-t: the value alone), or None when the PV does not answer."""
    r = subprocess.run([epics_bin("caget"), "-w", str(timeout_s), *args, pv], env=env, capture_output=True,
                       text=True, timeout=timeout_s + 10)
    return r.stdout.strip() if r.returncode == 0 else None


class SoftIoc:
    """A softIoc serving `db` (record text) on its own CA port; kill() and start() again keep the port."""

    def __init__(self, db_text, workdir, port=None):
        require_epics()
        self.port = port or free_port()
        self.env = ca_env(self.port)
        self.db = os.path.join(workdir, f"ioc-{self.port}.db")
        with open(self.db, "w") as f:
            f.write(db_text)
        self.proc = None
        self.log = os.path.join(workdir, f"ioc-{self.port}.log")

    def start(self, probe_pv=None):
        log = open(self.log, "a")
        self.proc = subprocess.Popen([epics_bin("softIoc"), "-S", "-d", self.db], env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if probe_pv:
            wait_until(f"softIoc on port {self.port} to serve {probe_pv}", lambda: caget(self.env, probe_pv, "-t", timeout_s=1))
        return self

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def stop(self):
        self.kill()


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="weir-epics-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def softioc_factory(workdir):
    iocs = []

    def make(db_text, port=None):
        ioc = SoftIoc(db_text, workdir, port)
        iocs.append(ioc)
        return ioc

    yield make
    for ioc in iocs:
        ioc.stop()


# The chaos suite's harness (weir run under supervision, the ledger checks), shared.
import sys  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chaos"))
