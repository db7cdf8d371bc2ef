"""epics "serve": weir's status, keys, channels and run control as PVs of an IOC database inside
weir-epics, started by a real `weir run` (a sim driver, an HDF5 recorder, the server on a free port).

Read by independent clients: EPICS base's caget/camonitor/caput, Debian's pyepics, npm's epics-tca (a
TypeScript Channel Access client) and, where QSRV is built, pvget/pvput. Run control: a run started by
`caput -c Capture 1` (put-callback) is the same run as one `weir runctl start` makes (run log row,
files, `weir runs ls`, `weir audit --all-runs`). Every wait is a deadline poll (conftest.wait_until)."""
import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import WEIR, WEIR_EPICS, ca_env, caget, epics_bin, free_port, require_epics, wait_until

PYTHON = "/usr/bin/python3"  # Debian's, with python3-pyepics
RATE = 102400                # samples/s of the sim channel (100 blocks/s of 1024)
FREQUENCY = 1000             # Hz of its sine
WAVE_ELEMENTS = 500
ENVELOPE_ELEMENTS = 200
_serial = itertools.count()

PIPELINE = """
arena {{ name = "{arena}"{arena_settings} }}
channel "adc0" {{ dtype = "f32", rate = {rate}, block = 1024, ring = 256 }}
driver "sim" {{ channels = {{"adc0"}}, signal = "sine", frequency = {frequency} }}
record "hdf5" {{ channels = {{"adc0"}}, out = "{out}", flush_ms = 200 }}
epics "serve" {{
  prefix = "{prefix}",
  keys = {{ "ring.current", "shots", "beam.mode", {{ key = "psu.setpoint", writable = true, units = "V", low = 0, high = 10, precision = 2 }} }},
  channels = {{ {{ channel = "adc0", elements = {wave} }}, {{ channel = "adc0", pv = "adc0env", mode = "envelope", elements = {env} }} }},
  update_hz = 20, stall_s = 1, server_port = {port}, pva_server_port = {pva_port}
}}
"""


def weir(*args, timeout=60, **kw):
    return subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=timeout, **kw)


class Served:
    """One `weir run` of a pipeline with an epics "serve" part, in its own session, on free ports."""

    def __init__(self, workdir, controlled=False, keys=None):
        require_epics()
        n = next(_serial)
        self.arena = f"epsrv{os.getpid()}x{n}"
        settings = ", channels = 4, channel_mb = 16, consumers = 8" + (', runs = "controlled"' if controlled else "")
        if keys:  # keys there before the server starts: an arena made first, which weir run attaches to
            r = weir("create", self.arena, "--channels", 4, "--pool", 32, "--consumers", 16)
            assert r.returncode == 0, r.stdout + r.stderr
            for key, value, kind in keys:
                r = weir("set", self.arena, key, value, "--type", kind)
                assert r.returncode == 0, r.stdout + r.stderr
            settings = ", attach = true" + (', runs = "controlled"' if controlled else "")
        self.prefix = f"T{os.getpid()}X{n}:"
        self.port = free_port()
        self.pva_port = free_port()
        self.out = Path(workdir) / f"out{n}"
        self.path = Path(workdir) / f"{self.arena}.lua"
        self.path.write_text(PIPELINE.format(arena=self.arena, arena_settings=settings,
                                             rate=RATE, frequency=FREQUENCY, out=self.out, prefix=self.prefix,
                                             wave=WAVE_ELEMENTS, env=ENVELOPE_ELEMENTS, port=self.port,
                                             pva_port=self.pva_port))
        # Clients and the server on loopback only; the server's pvAccess search socket there too.
        self.env = ca_env(self.port, extra={"EPICS_PVAS_INTF_ADDR_LIST": "127.0.0.1"})
        self.log_path = self.path.with_suffix(".log")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([WEIR, "run", str(self.path), "--status-every", "0"], env=self.env,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(f"weir-epics to serve {self.pv('RunState_RBV' if controlled else 'adc0:Rate_RBV')}:\n{self.output()}",
                   lambda: self.alive() and self.caget("RunState_RBV" if controlled else "adc0:Rate_RBV"), 60)

    def pv(self, name):
        return self.prefix + name

    def output(self):
        return self.log_path.read_text(errors="replace")[-4000:]

    def alive(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"weir run exited ({self.proc.returncode}):\n{self.output()}")
        return True

    def caget(self, name, *args):
        return caget(self.env, self.pv(name), "-t", *args, timeout_s=3)

    def ca(self, tool, *args, timeout=60):
        return subprocess.run([epics_bin(tool), *map(str, args)], env=self.env, capture_output=True, text=True,
                              timeout=timeout)

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


@pytest.fixture
def served(workdir):
    made = []

    def make(**kw):
        s = Served(workdir, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def part_pid(run_pid, argv1):
    """The pid of the part `weir <argv1> ...` that `weir run` (run_pid) started."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if ppid == run_pid and len(argv) > 1 and argv[1].decode() == argv1:
            return int(entry.name)
    return None


def assert_sine(samples, what):
    """Consecutive samples of one sine of any amplitude and phase: x[n+1] + x[n-1] == 2 cos(w) x[n]."""
    c = 2 * math.cos(2 * math.pi * FREQUENCY / RATE)
    worst = max(abs(samples[i + 1] + samples[i - 1] - c * samples[i]) for i in range(1, len(samples) - 1))
    assert worst < 1e-3, f"{what}: not the sim's {FREQUENCY} Hz sine (worst residual {worst}): {samples[:8]}"
    assert 0.5 < max(abs(x) for x in samples) <= 1.0 + 1e-6, f"{what}: amplitude {max(abs(x) for x in samples)}"


def npm_epics_tca():
    """node_modules holding npm's epics-tca, installed once into a cache reused by later runs."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("SKIPPED LOUDLY: no node/npm for the epics-tca client (Debian's nodejs and npm)")
    cache = Path(os.environ.get("WEIR_NPM_CACHE", Path.home() / ".cache" / "weir" / "npm"))
    modules = cache / "node_modules"
    if not (modules / "epics-tca" / "package.json").exists():
        cache.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(cache), "epics-tca"],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            pytest.skip(f"SKIPPED LOUDLY: npm install epics-tca failed (offline?): {r.stderr[-500:]}")
    return modules


TCA_GET = """
const { Context } = require("epics-tca");
(async () => {
  const ctx = new Context();
  await ctx.initialize();
  const out = {};
  for (const name of process.argv.slice(2)) {
    const ch = await ctx.createChannel(name);
    const got = ch ? await ch.get() : undefined;
    out[name] = got ? got.value : null;
  }
  console.log("RESULT " + JSON.stringify(out));
  ctx.destroyHard();
  process.exit(0);
})();
"""

PYEPICS_GET = """
import json, sys, epics
out = {}
for name in sys.argv[1:]:
    pv = epics.PV(name, form="ctrl")
    if not pv.wait_for_connection(timeout=10):
        out[name] = None
        continue
    v = pv.get(timeout=5, use_monitor=False, as_string=False)
    out[name] = {"value": v.tolist() if hasattr(v, "tolist") else v, "units": pv.units, "severity": pv.severity,
                 "count": pv.count, "type": pv.type}
print("RESULT " + json.dumps(out))
"""


def tagged_json(text, what):
    line = next((l for l in text.splitlines() if l.startswith("RESULT ")), None)
    assert line, f"{what} printed no result:\n{text[-2000:]}"
    return json.loads(line[len("RESULT "):])


def test_pvs_read_by_independent_clients(served, workdir):
    # Typed before the server starts (an i64 key is an int64in, a text key an lsi); ring.current after.
    s = served(keys=[("shots", "42", "i64"), ("beam.mode", "top-up", "text")])
    assert weir("set", s.arena, "ring.current", "101.5", "--type", "f64").returncode == 0
    assert weir("set", s.arena, "psu.setpoint", "3.25", "--type", "f64").returncode == 0

    # --- caget (EPICS base) ---
    wait_until("ring:current to read 101.5", lambda: s.caget("ring:current") == "101.5", 10)
    wait_until("shots to read 42", lambda: s.caget("shots") == "42", 10)
    wait_until("psu:setpoint to read 3.25", lambda: s.caget("psu:setpoint") == "3.25", 10)
    rate = float(wait_until("a rate on adc0:Rate_RBV",
                            lambda: (v := s.caget("adc0:Rate_RBV")) and float(v) > 0 and v, 20))
    assert abs(rate - RATE) / RATE < 0.05, f"adc0:Rate_RBV {rate} is not the sim's {RATE} samples/s"
    wave = wait_until("the newest block on adc0", lambda: s.caget("adc0"), 10).split()
    assert int(wave[0]) == WAVE_ELEMENTS, f"adc0 holds {wave[0]} elements, not {WAVE_ELEMENTS}"
    assert_sine([float(x) for x in wave[1:]], "caget adc0")
    assert s.caget("beam:mode") == "top-up"
    assert "DBF_DOUBLE" in s.ca("cainfo", s.pv("shots")).stdout  # an int64in: Channel Access serves int64 as DOUBLE
    assert weir("set", s.arena, "beam.mode", "injection").returncode == 0
    wait_until("beam:mode to read injection", lambda: s.caget("beam:mode") == "injection", 10)
    assert s.caget("Part:sim:State_RBV") == "running" and s.caget("Part:record:State_RBV") == "running"
    assert float(s.caget("DiskFree_RBV")) > 0
    assert s.caget("adc0:Dropped_RBV") == "0"
    assert int(s.caget("adc0:Lag_RBV")) < 256  # the recorder keeps up with a 256-block ring

    # --- camonitor: monitors post the changes of a key ---
    mon = subprocess.Popen([epics_bin("camonitor"), "-t", "n", s.pv("shots")], env=s.env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        seen = []

        def reader():
            line = mon.stdout.readline()
            seen.append(line)
            return line

        wait_until("camonitor's first update of shots", lambda: "42" in reader(), 10)
        for v in (43, 44):
            assert weir("set", s.arena, "shots", v, "--type", "i64").returncode == 0
            wait_until(f"camonitor to see shots = {v} (seen {seen})", lambda: str(v) in reader().split()[-1:], 10)
    finally:
        mon.kill()
        mon.wait(10)

    # --- puts: a writable key (drive limits), a read-only one refused by the server ---
    r = s.ca("caput", "-c", "-w", "5", s.pv("psu:setpoint"), "7.5")
    assert r.returncode == 0, r.stdout + r.stderr
    wait_until("psu.setpoint = 7.5 in the arena", lambda: weir("get", s.arena, "psu.setpoint").stdout.strip() == "7.5", 5)
    assert s.ca("caput", "-c", "-w", "5", s.pv("psu:setpoint"), "12").returncode == 0
    wait_until("psu.setpoint clamped to DRVH 10", lambda: weir("get", s.arena, "psu.setpoint").stdout.strip() == "10", 5)
    assert weir("set", s.arena, "psu.setpoint", "2.5", "--type", "f64").returncode == 0  # weir's value shows on the PV
    wait_until("psu:setpoint to show the arena's 2.5", lambda: s.caget("psu:setpoint") == "2.5", 10)
    r = s.ca("caput", "-w", "5", s.pv("ring:current"), "5")
    assert r.returncode != 0 and "Write access denied" in r.stdout + r.stderr, r.stdout + r.stderr
    assert weir("get", s.arena, "ring.current").stdout.strip() == "101.5"
    assert s.caget("ring:current") == "101.5"

    # --- pyepics (Debian's python3-pyepics, its own libca) ---
    env = dict(s.env)
    r = subprocess.run([PYTHON, "-c", PYEPICS_GET, s.pv("ring:current"), s.pv("shots"), s.pv("psu:setpoint"),
                        s.pv("adc0"), s.pv("adc0env:Min"), s.pv("adc0env:Max"), s.pv("Part:sim:State_RBV"),
                        s.pv("adc0:Rate_RBV")], env=env, capture_output=True, text=True, timeout=60)
    py = tagged_json(r.stdout + r.stderr, "pyepics")
    assert py[s.pv("ring:current")]["value"] == 101.5
    assert py[s.pv("shots")]["value"] == 44
    assert py[s.pv("psu:setpoint")]["units"] == "V" and py[s.pv("psu:setpoint")]["value"] == 2.5
    assert py[s.pv("adc0:Rate_RBV")]["units"] == "S/s"
    assert py[s.pv("Part:sim:State_RBV")]["value"] == "running"
    block = py[s.pv("adc0")]["value"]
    assert len(block) == WAVE_ELEMENTS
    assert_sine(block, "pyepics adc0")
    lo, hi = py[s.pv("adc0env:Min")]["value"], py[s.pv("adc0env:Max")]["value"]
    assert len(lo) == len(hi) == ENVELOPE_ELEMENTS
    empty = [i for i, (a, b) in enumerate(zip(lo, hi)) if math.isnan(a) or math.isnan(b)]
    assert not empty, f"envelope buckets {empty} are empty"
    assert all(-1.0001 <= a <= -0.9 and 0.9 <= b <= 1.0001 for a, b in zip(lo, hi)), (lo[:5], hi[:5])

    # --- npm's epics-tca (a TypeScript client of its own, no libca) ---
    modules = npm_epics_tca()
    script = Path(workdir) / "tca_get.js"
    script.write_text(TCA_GET)
    r = subprocess.run(["node", str(script), s.pv("ring:current"), s.pv("shots"), s.pv("beam:mode"), s.pv("Part:sim:State_RBV"),
                        s.pv("adc0:Rate_RBV")], env={**s.env, "NODE_PATH": str(modules)}, capture_output=True,
                       text=True, timeout=60)
    tca = tagged_json(r.stdout + r.stderr, "epics-tca")
    scalar = lambda v: v[0] if isinstance(v, list) else v  # noqa: E731
    assert scalar(tca[s.pv("ring:current")]) == 101.5, tca
    assert scalar(tca[s.pv("shots")]) == 44, tca
    assert scalar(tca[s.pv("beam:mode")]) == "injection", tca
    assert scalar(tca[s.pv("Part:sim:State_RBV")]) == "running", tca
    assert abs(scalar(tca[s.pv("adc0:Rate_RBV")]) - RATE) / RATE < 0.05, tca

    # --- pvget/pvput over pvAccess (QSRV), where the base has it ---
    if os.access(epics_bin("pvget"), os.X_OK):
        r = s.ca("pvget", "-w", "5", s.pv("ring:current"), s.pv("shots"), timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"ring:current\s.*\s101\.5\b", r.stdout) and re.search(r"shots\s.*\s44\b", r.stdout), r.stdout
        r = s.ca("pvget", "-w", "5", "-v", s.pv("shots"), timeout=30)
        assert "long" in r.stdout or "int64" in r.stdout, f"pvAccess serves the i64 key as an integer: {r.stdout}"
        r = s.ca("pvput", "-w", "5", s.pv("ring:current"), "7", timeout=30)
        assert r.returncode != 0 or "not permitted" in (r.stdout + r.stderr).lower(), r.stdout + r.stderr
        assert weir("get", s.arena, "ring.current").stdout.strip() == "101.5"
        r = s.ca("pvput", "-w", "5", s.pv("psu:setpoint"), "4", timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        wait_until("psu.setpoint = 4 from pvput", lambda: weir("get", s.arena, "psu.setpoint").stdout.strip() == "4", 5)
    else:
        print("pvget: not built in this EPICS base (no QSRV); pvAccess not checked")

    # --- the stall alarm: the writer stopped for more than stall_s is MAJOR on its rate PV (last: the
    # stop leaves a gap in the channel, whose envelope buckets are then empty) ---
    sim = part_pid(s.proc.pid, "sim")
    assert sim, "the sim driver's process"
    os.kill(sim, signal.SIGSTOP)
    try:
        wait_until("adc0:Rate_RBV to be a MAJOR STATE alarm while its writer is stopped",
                   lambda: (a := caget(s.env, s.pv("adc0:Rate_RBV"), "-a")) and "STATE MAJOR" in a, 10)
    finally:
        os.kill(sim, signal.SIGCONT)
    wait_until("adc0:Rate_RBV's alarm to clear when the writer goes on",
               lambda: (a := caget(s.env, s.pv("adc0:Rate_RBV"), "-a")) and "MAJOR" not in a, 10)

    assert s.stop() == 0, s.output()
    assert "epics serve:" in s.output() and "refused" in s.output()


def runs_csv(out, arena):
    lines = (Path(out) / f"{arena}_runs.csv").read_text().splitlines()
    header = lines[0].split(",")
    import csv
    return header, [dict(zip(header, row)) for row in csv.reader(lines[1:])]


def runctl_status(arena):
    return json.loads(weir("runctl", "status", arena, "--json").stdout)


def recording(arena, number):
    return any(r["alive"] and r["open_run"] == number and r["first_block_ns"] for r in runctl_status(arena)["recorders"])


def test_run_started_by_caput_matches_runctl(served):
    s = served(controlled=True)
    wait_until("the recorder to join the run control",
               lambda: runctl_status(s.arena)["dir"] and any(r["alive"] for r in runctl_status(s.arena)["recorders"]), 30)
    assert s.caget("RunState_RBV") == "Idle" and s.caget("Capture") == "Done"
    assert s.caget("FilePath_RBV") == str(s.out)

    # A read-only PV refuses a put; the run state does not change.
    r = s.ca("caput", "-w", "5", s.pv("RunState_RBV"), "1")
    assert r.returncode != 0 and "Write access denied" in r.stdout + r.stderr, r.stdout + r.stderr
    # Stop with no run: refused, the record in alarm, the reason in RunMessage_RBV; the put-callback returns.
    r = s.ca("caput", "-c", "-w", "30", s.pv("Stop"), "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WRITE INVALID" in caget(s.env, s.pv("Stop"), "-a")
    assert "running" in s.caget("RunMessage_RBV.VAL$", "-S").lower(), s.caget("RunMessage_RBV.VAL$", "-S")

    # Run 1: by Channel Access, the areaDetector way.
    title = "epics run: " + "long title " * 8  # past DBR_STRING's 40 characters: the lso's VAL$
    assert s.ca("caput", "-S", s.pv("RunTitle.VAL$"), title).returncode == 0
    assert s.ca("caput", s.pv("RunOperator"), "ops").returncode == 0
    assert s.ca("caput", s.pv("RunSample"), "Si wafer").returncode == 0
    r = s.ca("caput", "-c", "-w", "30", s.pv("Capture"), "1")
    assert r.returncode == 0, r.stdout + r.stderr
    # The put-callback returned after the transition: the run already runs.
    assert runctl_status(s.arena)["state"] == "running" and runctl_status(s.arena)["run"] == 1
    wait_until("RunState_RBV Running", lambda: s.caget("RunState_RBV") == "Running", 5)
    assert s.caget("FileNumber_RBV") == "1" and s.caget("RunNumber_RBV") == "1" and s.caget("Capture_RBV") == "Capturing"
    assert s.caget("FullFileName_RBV.VAL$", "-S").startswith(str(s.out / f"{s.arena}_run"))
    wait_until("run 1's first block in the recorder", lambda: recording(s.arena, 1), 30)
    wait_until("NumCaptured_RBV to count run 1's blocks", lambda: int(s.caget("NumCaptured_RBV") or 0) >= 50, 30)
    # A second Capture 1 while running is refused, and says why.
    assert s.ca("caput", "-c", "-w", "30", s.pv("Capture"), "1").returncode == 0
    assert "WRITE INVALID" in caget(s.env, s.pv("Capture"), "-a")
    assert "run 1" in s.caget("RunMessage_RBV.VAL$", "-S"), s.caget("RunMessage_RBV.VAL$", "-S")
    r = s.ca("caput", "-c", "-w", "60", s.pv("Capture"), "0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert runctl_status(s.arena)["state"] == "idle"
    wait_until("RunState_RBV Idle", lambda: s.caget("RunState_RBV") == "Idle", 5)
    assert "run 1 stopped" in s.caget("RunMessage_RBV.VAL$", "-S")

    # Run 2: by `weir runctl`, the command-line door.
    r = weir("runctl", "start", s.arena, "--title", "cli run")
    assert r.returncode == 0 and int(r.stdout) == 2, r.stdout + r.stderr
    wait_until("Capture to follow a run started elsewhere", lambda: s.caget("Capture") == "Capture", 5)
    wait_until("run 2's first block in the recorder", lambda: recording(s.arena, 2), 30)
    wait_until("blocks in run 2", lambda: int(s.caget("NumCaptured_RBV") or 0) >= 50, 30)
    r = weir("runctl", "stop", s.arena, "--wait-s", "30")
    assert r.returncode == 0, r.stdout + r.stderr
    wait_until("Capture back to Done", lambda: s.caget("Capture") == "Done", 5)

    # Run 3: Start, then Abort (bo records, put-callback).
    assert s.ca("caput", "-c", "-w", "30", s.pv("Start"), "1").returncode == 0
    wait_until("run 3's first block in the recorder", lambda: recording(s.arena, 3), 30)
    assert s.ca("caput", "-c", "-w", "60", s.pv("Abort"), "1").returncode == 0
    assert runctl_status(s.arena)["state"] == "idle"

    assert s.stop() == 0, s.output()
    header, rows = runs_csv(s.out, s.arena)
    assert [r["run"] for r in rows] == ["1", "2", "3"], rows
    one, two, three = rows
    assert set(one) == set(two) == set(header)
    assert (one["ended"], one["door"], one["exact"]) == ("stopped", "epics", "true"), one
    assert (two["ended"], two["door"], two["exact"]) == ("stopped", "cli", "true"), two
    assert (three["ended"], three["door"]) == ("aborted", "epics"), three
    assert one["title"] == title and one["operator"] == "ops" and one["sample"] == "Si wafer", one
    assert two["title"] == "cli run"
    for row in (one, two):
        assert int(row["files"]) >= 1 and int(row["blocks_recorded"]) > 0, row
        assert row["blocks_written"] == row["blocks_recorded"] and row["blocks_lost"] == "0", row
    for n in (1, 2, 3):
        assert list(s.out.glob(f"{s.arena}_run{n:06d}*.h5")), f"run {n}'s files in {sorted(os.listdir(s.out))}"
    listed = json.loads(weir("runs", "ls", s.out, "--json").stdout)["runs"]
    assert [(r["run"], r["door"]) for r in listed] == [(1, "epics"), (2, "cli"), (3, "epics")], listed
    audit = weir("audit", s.out, "--all-runs", timeout=120)
    assert audit.returncode == 0, audit.stdout + audit.stderr
