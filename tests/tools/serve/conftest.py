"""Fixtures for weir serve's tests: scratch arenas, `weir sim` writers and `weir serve` processes,
all real processes over loopback sockets, found through the environment ctest sets."""
import http.client
import itertools
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("WEIR_BUILD_DIR", HERE.parents[2] / "build"))
WEIR = os.environ.get("WEIR_CLI", str(BUILD / "tools" / "weir"))
SPIKE_WRITER = os.environ.get("WEIR_SPIKE_WRITER", str(BUILD / "tests" / "tools" / "serve" / "weir_serve_spike_writer"))
SCRATCH = Path(os.environ.get("WEIR_TEST_SCRATCH", "/tmp/weir-serve-tests"))
WAIT_S = 20  # bound on every wait for a process or a condition

_serial = itertools.count()


def run_weir(*args, check=True):
    result = subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"weir {' '.join(map(str, args))} failed ({result.returncode}): {result.stderr}")
    return result


def wait_for(predicate, what, timeout=WAIT_S, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Server:
    """A running `weir serve` on a free loopback port."""

    def __init__(self, arena, *args):
        self.proc = subprocess.Popen([WEIR, "serve", arena, "--port", "0", *map(str, args)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"http://([^/]+):(\d+)/", line)
        if not match:
            self.proc.kill()
            raise AssertionError(f"weir serve did not start: {line!r} {self.proc.stderr.read()}")
        self.host, self.port = match.group(1).strip("[]"), int(match.group(2))
        self.url = f"http://127.0.0.1:{self.port}/"

    def request(self, path, method="GET", body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, dict(response.getheaders()), data

    def json(self, path, **kw):
        status, _, data = self.request(path, **kw)
        assert status == 200, f"{path}: {status} {data!r}"
        return json.loads(data)

    def rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def arena():
    name = f"servetest-{os.getpid()}-{next(_serial)}"
    run_weir("rm", name, "--force", check=False)
    run_weir("create", name)
    yield name
    run_weir("rm", name, "--force", check=False)


@pytest.fixture
def processes():
    """Starts processes the test needs and stops them however it ends."""
    started = []

    def start(*args, **kw):
        proc = subprocess.Popen([*map(str, args)], stdout=kw.get("stdout", subprocess.DEVNULL),
                                stderr=subprocess.PIPE, stdin=kw.get("stdin"), text=True)
        started.append(proc)
        return proc

    yield start
    for proc in reversed(started):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def serve():
    servers = []

    def start(arena, *args):
        server = Server(arena, *args)
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def start_sim(processes, arena, *channels, signal="sine", rate="1e6", extra=()):
    proc = processes(WEIR, "sim", arena, *channels, "--rate", rate, "--block", "4096", "--signal", signal, *extra)
    wait_for(lambda: len(json.loads(run_weir("ls", arena, "--json").stdout)["channels"]) >= len(channels),
             "the sim's channels")
    return proc


def scratch_dir(name):
    path = SCRATCH / name
    path.mkdir(parents=True, exist_ok=True)
    return path
