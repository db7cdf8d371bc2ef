"""Fixtures of the chaos suite: a scratch directory per test (removed afterwards, with everything
mounted in it; WEIR_CHAOS_KEEP=1 keeps it), pipeline files, and the rule that a scenario the machine
cannot stage is skipped loudly: the reason is printed and the session exits 77, which ctest reports
as "Skipped" (SKIP_RETURN_CODE), never as passed."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chaos import BASE_SEED, WEIR, MountRefused, Supervised, private_name, remove_arena, umount  # noqa: E402

SKIPPED = 77


def pytest_report_header(config):
    return [f"weir: {WEIR}", f"chaos seed: WEIR_CHAOS_SEED={BASE_SEED}"]


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if exitstatus == 0 and skipped:
        for report in skipped:
            print(f"\nSKIPPED, NOT PASSED: {report.nodeid}: {report.longrepr[-1]}", file=sys.stderr)
        session.exitstatus = SKIPPED


@pytest.fixture
def workdir():
    if not os.access(WEIR, os.X_OK):
        pytest.fail(f"no weir binary at {WEIR} (set WEIR_CLI)")
    path = Path(tempfile.mkdtemp(prefix="weir-chaos-"))
    yield path
    if os.environ.get("WEIR_CHAOS_KEEP"):
        print(f"kept {path}")
        return
    with open("/proc/self/mounts") as mounts:  # whatever a failed test left mounted here, deepest first
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(str(path) + "/")]
    for point in sorted(points, key=len, reverse=True):
        umount(point)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def staged():
    """Turns MountRefused into a loud skip."""
    class Stage:
        def __init__(self):
            self.cms = []

        def __call__(self, cm):
            try:
                value = cm.__enter__()
            except MountRefused as why:
                pytest.skip(f"cannot stage this scenario here: {why}")
            self.cms.append(cm)
            return value
    stage = Stage()
    yield stage
    for cm in reversed(stage.cms):
        cm.__exit__(None, None, None)


PIPELINE = """
arena {{ name = "{arena}", channels = 8, channel_mb = 16, consumers = 16{arena_extra} }}
channel "a" {{ dtype = "f32", rate = {rate}, block = 1024, ring = {ring} }}
driver "sim" {{ channels = {{"a"}}, signal = "sine", frequency = 1000, restarts = 1000 }}
{shard}record "hdf5" {{ channels = {{{channels}}}, out = "{out}", rotate_s = {rotate_s}, flush_ms = 200, restarts = 1000{record_extra} }}
"""
FFT = 'shard "fft" { input = "a", output = "a.psd", size = 1024, window = "hann", spectrum = "psd", thread = false, restarts = 1000 }\n'


class Pipeline:
    """A pipeline file with a private arena name: a sim driver on channel a (100 blocks/s of 1024
    f32 samples by default), optionally the fft shard in its own process (channel a.psd), and a
    lossless HDF5 recorder rotating every `rotate_s` into `out`."""

    def __init__(self, workdir, out, *, shard=True, rate=102400, ring=256, rotate_s=1, record_extra="", arena_extra=""):
        self.arena = private_name("")
        self.out = Path(out)
        self.path = Path(workdir) / f"{self.arena}.lua"
        channels = '"a", "a.psd"' if shard else '"a"'
        self.path.write_text(PIPELINE.format(arena=self.arena, rate=rate, ring=ring, shard=FFT if shard else "",
                                             channels=channels, out=self.out, rotate_s=rotate_s,
                                             record_extra=record_extra, arena_extra=arena_extra))
        self.kinds = ["driver", "recorder"] + (["shard"] if shard else [])
        self.runs = []

    def run(self, *extra):
        r = Supervised(self.path, *extra)
        self.runs.append(r)
        return r

    def close(self):
        for r in self.runs:
            r.close()
        remove_arena(self.arena)


@pytest.fixture
def pipeline(workdir, staged):  # after `staged`: every run is killed before anything is unmounted
    made = []

    def make(out=None, **kw):
        p = Pipeline(workdir, out or workdir / f"out{len(made)}", **kw)
        made.append(p)
        return p
    yield make
    for p in made:
        p.close()
