"""Vector partitions from Python: label and fill a partition, ask a real `weir ann` service through the
arena (arena.vectors(part).search), check its answers against the exact search, and the errors."""
import subprocess
import time

import numpy as np
import pytest

import weir
from conftest import WEIR, run_weir

DIM = 16
CLASSES = 4
PER_CLASS = 150


@pytest.fixture
def vector_arena():
    name = f"pyv-{time.monotonic_ns()}"
    run_weir("create", name, "--slots", 4096, "--dim", DIM, "--value-bytes", 512)
    yield name
    run_weir("rm", name, "--force", check=False)


def fill(arena, part):
    """PER_CLASS noisy copies of CLASSES random directions, keys part/<class>/<i>."""
    rng = np.random.default_rng(29)
    centres = rng.normal(size=(CLASSES, DIM))
    for c in range(CLASSES):
        for i in range(PER_CLASS):
            arena.set_vector(f"{part}/{c}/{i}", centres[c] + 0.15 * rng.normal(size=DIM), part=part)
    return centres


def start_service(name, part):
    proc = subprocess.Popen([WEIR, "ann", name, part], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()  # "...; serving" once the index is built
    if "serving" not in line:
        proc.kill()
        raise AssertionError(f"weir ann did not start: {line!r} {proc.stderr.read()}")
    return proc


def stop(proc):
    proc.terminate()
    proc.wait(timeout=20)


def test_search_through_the_service_matches_the_exact_search(vector_arena):
    arena = weir.Arena(vector_arena)
    centres = fill(arena, "pulses")
    arena.set_vector("other/0", centres[0])  # a vector outside the partition is never an answer
    proc = start_service(vector_arena, "pulses")
    try:
        with arena.vectors("pulses") as pulses:
            assert pulses.dim == DIM
            hits = pulses.search(like="pulses/2/7", k=10)
            assert len(hits) == 10
            assert hits[0][0] == "pulses/2/7" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
            assert all(key.startswith("pulses/2/") for key, _ in hits), hits
            assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
            recall = []
            for c in range(CLASSES):
                query = centres[c].astype(np.float32)
                ann = pulses.search(query=query, k=10)
                exact = pulses.search(query=query, k=10, exact=True)
                assert "other/0" not in {k for k, _ in ann} | {k for k, _ in exact}
                assert all(k.startswith(f"pulses/{c}/") for k, _ in exact)
                recall.append(len({k for k, _ in ann} & {k for k, _ in exact}) / 10)
            assert np.mean(recall) >= 0.95, recall
            # A vector query's key never lingers: the exact search over the whole arena sees no ann/ keys.
            assert not any(k.startswith("ann/") for k, _ in arena.vector_search(centres[1], k=50))
    finally:
        stop(proc)


def test_new_vectors_are_followed(vector_arena):
    arena = weir.Arena(vector_arena)
    fill(arena, "pulses")
    proc = start_service(vector_arena, "pulses")
    try:
        pulses = arena.vectors("pulses")
        odd = np.zeros(DIM, dtype=np.float32)
        odd[3] = 1.0

        def nearest():
            # The key of the nearest hit; None when the service's hit was deleted before its key was read.
            hits = pulses.search(query=odd, k=1)
            return hits[0][0] if hits else None

        arena.set_vector("pulses/new", odd, part="pulses")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and nearest() != "pulses/new":  # indexed shortly after the write
            time.sleep(0.01)
        assert nearest() == "pulses/new"
        del arena["pulses/new"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and nearest() in ("pulses/new", None):
            time.sleep(0.01)
        assert nearest() not in ("pulses/new", None)
        pulses.close()
    finally:
        stop(proc)


def test_errors_name_the_partition(vector_arena):
    arena = weir.Arena(vector_arena)
    fill(arena, "pulses")
    pulses = arena.vectors("pulses")
    with pytest.raises(weir.NotFoundError, match="pulses"):
        pulses.search(like="pulses/0/0")  # no service running
    assert len(pulses.search(like="pulses/0/0", exact=True)) == 10  # the exact search needs none
    with pytest.raises(ValueError, match="exactly one"):
        pulses.search()
    with pytest.raises(ValueError, match="k must be"):
        pulses.search(like="pulses/0/0", k=0)
    proc = start_service(vector_arena, "pulses")
    try:
        with pytest.raises(weir.WeirError, match="pulses"):
            pulses.search(query=np.ones(DIM + 1, dtype=np.float32))
    finally:
        stop(proc)
