"""Fixtures for the weir package's tests: scratch arenas made by the real `weir` CLI, and the
counter writer process (counter_writer.cpp), located through the environment ctest sets."""
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("WEIR_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
WEIR = os.environ.get("WEIR_CLI", str(BUILD / "tools" / "weir"))
WRITER = os.environ.get("WEIR_COUNTER_WRITER", str(BUILD / "tests" / "python" / "weir_py_counter_writer"))
SOURCE = Path(os.environ.get("WEIR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
if str(BUILD / "python") not in sys.path:
    sys.path.insert(0, str(BUILD / "python"))

_serial = itertools.count()


def run_weir(*args, check=True, input=None):
    """Runs the built weir CLI; returns its CompletedProcess (text)."""
    result = subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, input=input, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"weir {' '.join(map(str, args))} failed ({result.returncode}): {result.stderr}")
    return result


@pytest.fixture
def arena_name():
    """A fresh shm arena created by `weir create`, removed afterwards."""
    name = f"pyt-{os.getpid()}-{next(_serial)}"
    run_weir("rm", name, "--force", check=False)
    run_weir("create", name)
    yield name
    run_weir("rm", name, "--force", check=False)


def start_writer(arena, channel, *args):
    """Starts the counter writer; returns the process once it says it holds the channel."""
    proc = subprocess.Popen([WRITER, arena, channel, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"counter writer did not start: {line!r} {proc.stderr.read()}")
    return proc


def check_counter(block):
    """Every sample of a counter block is its index in the channel's stream."""
    import numpy as np
    expected = np.arange(block.first_sample, block.first_sample + block.samples, dtype=np.int64)
    assert block.data.dtype == np.int64
    assert np.array_equal(block.data, expected), f"block {block.sequence} is not the counter"
