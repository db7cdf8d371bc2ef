"""`weir run` under systemd's notify protocol, with this test as the service manager: an AF_UNIX
datagram socket given as NOTIFY_SOCKET, WATCHDOG_USEC set as systemd sets it. READY=1 only once the
parts run and the recorder is registered, STATUS= lines, WATCHDOG=1 at half the interval, none
while weir run is stopped (SIGSTOP), pings again after SIGCONT, STOPPING=1 on SIGTERM.

Every wait has a deadline and says what it saw. Skips loudly (exit 77, ctest "Skipped") when weir
was built without libsystemd (WEIR_HAVE_LIBSYSTEMD=0)."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

WEIR = os.environ.get("WEIR_CLI", str(Path(__file__).resolve().parents[2] / "build" / "tools" / "weir"))
SKIPPED = 77
WATCHDOG_S = 1.0  # WATCHDOG_USEC as the test's "service manager" sets it: pings every 0.5 s
PING_S = WATCHDOG_S / 2

PIPELINE = """arena {{ name = "{arena}", channels = 4, channel_mb = 8 }}
channel "a" {{ rate = 20000, block = 200, ring = 64 }}
driver "sim" {{ channels = {{"a"}}, name = "src" }}
record "hdf5" {{ channels = {{"a"}}, out = "{out}", name = "rec" }}
"""


@pytest.fixture(scope="module", autouse=True)
def needs_libsystemd():
    if os.environ.get("WEIR_HAVE_LIBSYSTEMD", "1") in ("0", "OFF", ""):
        print("\nSKIPPED LOUDLY: weir was built without libsystemd (Debian: libsystemd-dev): the notify protocol "
              "is off and cannot be tested", file=sys.stderr)
        pytest.exit("weir built without libsystemd", returncode=SKIPPED)
    if not os.access(WEIR, os.X_OK):
        pytest.fail(f"no weir binary at {WEIR} (set WEIR_CLI)")


class Manager:
    """The service manager's end: a datagram socket that keeps every message with its arrival time."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.path = str(path)
        self.messages = []  # (monotonic arrival, {field: value})

    def pump(self, timeout):
        """Reads what arrives within `timeout` seconds."""
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return
        fields = {}
        for line in data.decode("utf-8", "replace").split("\n"):
            if "=" in line:
                key, value = line.split("=", 1)
                fields[key] = value
        self.messages.append((time.monotonic(), fields))

    def wait_for(self, predicate, what, timeout, since=0):
        """The first message at index >= since that satisfies predicate; fails saying what arrived."""
        deadline = time.monotonic() + timeout
        checked = since
        while True:
            for i in range(checked, len(self.messages)):
                if predicate(self.messages[i][1]):
                    return i
            checked = max(checked, len(self.messages))
            left = deadline - time.monotonic()
            if left <= 0:
                seen = [sorted(m.keys()) for _, m in self.messages[since:]][-12:]
                raise AssertionError(f"timed out after {timeout} s waiting for {what}; "
                                     f"{len(self.messages) - since} message(s) came, the last: {seen}")
            self.pump(left)

    def collect(self, seconds):
        """Every message that arrives in the next `seconds` (a window to observe, not a wait)."""
        start = len(self.messages)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.pump(left)
        return self.messages[start:]


def weir_text(*args):
    r = subprocess.run([WEIR, *args], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr


@pytest.fixture
def service():
    work = Path(tempfile.mkdtemp(prefix="weir-notify-"))
    arena = f"notify{os.getpid()}"
    out = work / "out"
    out.mkdir()
    pipeline = work / "pipeline.lua"
    pipeline.write_text(PIPELINE.format(arena=arena, out=out))
    manager = Manager(work / "notify.sock")
    env = dict(os.environ, NOTIFY_SOCKET=manager.path, WATCHDOG_USEC=str(int(WATCHDOG_S * 1e6)))
    env.pop("WATCHDOG_PID", None)
    log = open(work / "run.log", "w+")
    # As systemd does: WATCHDOG_PID is the main process's pid (sd_watchdog_enabled checks it), here
    # the shell's, which exec keeps for weir run.
    proc = subprocess.Popen(["/bin/sh", "-c", 'WATCHDOG_PID=$$ exec "$@"', "sh", WEIR, "run", str(pipeline), "--replace", "--status-every", "1"], stdout=log,
                            stderr=subprocess.STDOUT, env=env)
    yield proc, manager, arena, log
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    log.seek(0)
    print(log.read())
    subprocess.run([WEIR, "rm", arena], capture_output=True)
    subprocess.run(["rm", "-rf", str(work)])


def test_ready_status_watchdog_and_stopping(service):
    proc, manager, arena, log = service
    ready_at = manager.wait_for(lambda m: m.get("READY") == "1", "READY=1", timeout=30)
    # At READY both parts run and the recorder is registered on its channel.
    for part in ("src", "rec"):
        rc, text = weir_text("get", arena, f"weir.part.{part}.state")
        assert rc == 0 and text.strip() == "running", f"at READY=1 part {part} is {text.strip()!r} (rc {rc})"
    rc, text = weir_text("ls", arena)
    assert rc == 0 and "record" in text, f"at READY=1 no recorder is registered on the channel: {text}"
    no_earlier = [m for _, m in manager.messages[:ready_at] if "READY" in m]
    assert not no_earlier, f"READY came twice: {no_earlier}"
    assert "parts 2/2" in manager.messages[ready_at][1].get("STATUS", ""), manager.messages[ready_at][1]

    # STATUS lines: the supervisor's status line, once a second.
    first = manager.wait_for(lambda m: "STATUS" in m and "READY" not in m, "a STATUS= line after READY", 5, ready_at)
    assert "MS/s" in manager.messages[first][1]["STATUS"], manager.messages[first][1]

    # WATCHDOG=1 at half the interval.
    window = manager.collect(3 * WATCHDOG_S)
    pings = [t for t, m in window if m.get("WATCHDOG") == "1"]
    assert len(pings) >= 4, f"{len(pings)} WATCHDOG=1 in {3 * WATCHDOG_S} s (expected every {PING_S} s): {window}"
    gaps = [b - a for a, b in zip(pings, pings[1:])]
    assert all(0.3 * PING_S < g < 1.8 * PING_S for g in gaps), f"pings {PING_S} s apart expected, gaps were {gaps}"

    # A stopped (hung) weir run is not pinged for more than two watchdog periods.
    os.kill(proc.pid, signal.SIGSTOP)
    manager.collect(0.2)  # what was already on its way when it stopped
    quiet = manager.collect(2.5 * WATCHDOG_S)
    assert not [m for _, m in quiet if m.get("WATCHDOG")], f"pings while SIGSTOPped: {quiet}"
    os.kill(proc.pid, signal.SIGCONT)
    resumed = len(manager.messages)
    manager.wait_for(lambda m: m.get("WATCHDOG") == "1", "WATCHDOG=1 again after SIGCONT", 3 * WATCHDOG_S, resumed)

    # SIGTERM: STOPPING=1, then weir run ends.
    stop_from = len(manager.messages)
    proc.send_signal(signal.SIGTERM)
    manager.wait_for(lambda m: m.get("STOPPING") == "1", "STOPPING=1 after SIGTERM", 15, stop_from)
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        manager.pump(0.2)
    assert proc.poll() is not None, "weir run still running 30 s after SIGTERM"
    after_stop = [m for _, m in manager.messages[stop_from:] if m.get("READY")]
    assert not after_stop, f"READY after the stop began: {after_stop}"


def test_without_notify_socket_nothing_is_said(tmp_path):
    # A weir run from a shell: no NOTIFY_SOCKET, no "systemd:" line, an ordinary run.
    arena = f"notifyoff{os.getpid()}"
    (tmp_path / "out").mkdir()
    pipeline = tmp_path / "p.lua"
    pipeline.write_text(PIPELINE.format(arena=arena, out=tmp_path / "out"))
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    r = subprocess.run([WEIR, "run", str(pipeline), "--duration", "1"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "systemd:" not in r.stdout + r.stderr
