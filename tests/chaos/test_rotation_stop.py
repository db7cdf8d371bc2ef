"""A stop right at a time rotation: `weir run` with rotate_s = 1, SIGINT timed at seeded offsets
around the next boundary (the stop sequence itself takes a few tens of ms: drivers stop first,
then the recorder, so a boundary inside that window is the case that left empty files). Every file
must hold at least one block of every channel it has, or not exist; the ledger must be exact."""
import time

import h5py

from chaos import rng_for, wait_for, writer_counts
from ledger_check import check_run, count_tables, run_files, runs_in

TRIES = 8


def empty_channels(path):
    counts = {name: sum(len(s) for s in ch["sequences"]) for name, ch in count_tables([path]).items()}
    with h5py.File(path, "r") as f:
        groups = [g for g in f["entry"].values() if isinstance(g, h5py.Group) and "block_sequence" in g]
    return [name for name, n in counts.items() if n == 0] + ([] if groups else ["(no channel at all)"])


def test_stop_at_a_rotation_leaves_no_empty_file(pipeline):
    rng = rng_for("rotation_stop")
    empty = []
    for attempt in range(TRIES):
        p = pipeline(shard=False, rotate_s=1)
        run = p.run()
        run.wait_parts(p.kinds)

        def second_file():
            numbers = runs_in(p.out, p.arena) if p.out.exists() else []
            return numbers and len(run_files(p.out, p.arena, numbers[0])) >= 2
        wait_for(second_file, 20, "the first rotation", every=0.002)
        boundary = time.monotonic() + 1.0  # the segment just opened closes a second later
        offset = rng.uniform(-0.08, 0.02)
        time.sleep(max(0.0, boundary + offset - time.monotonic()))
        rc = run.stop()
        assert rc == 0, f"try {attempt}: weir run exits {rc}:\n{run.output()[-3000:]}"
        (number,) = runs_in(p.out, p.arena)
        files = run_files(p.out, p.arena, number)
        for path in files:
            missing = empty_channels(path)
            if missing:
                empty.append(f"try {attempt} (SIGINT {offset * 1000:+.0f} ms from the boundary): {path.name} "
                             f"has no block of {missing}")
        check_run(p.out, p.arena, number, writer_counts(run.output()))
        print(f"try {attempt}: SIGINT {offset * 1000:+.0f} ms from the boundary, {len(files)} files", flush=True)
    assert not empty, "empty files after a stop at a rotation:\n  " + "\n  ".join(empty)
