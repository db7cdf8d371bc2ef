"""Channels from Python against real writer processes: lossless following checks every sample, a
lapped reader counts exactly what it lost, a killed writer's half block is never handed out."""
import numpy as np
import pytest

import weir
from conftest import check_counter, start_writer

BLOCK = 1024


def test_a_lossless_follower_gets_every_sample_of_a_running_writer(arena_name):
    blocks = 3000
    writer = start_writer(arena_name, "count", "--block", BLOCK, "--ring", 16, "--blocks", blocks,
                          "--wait-lossless")
    try:
        arena = weir.Arena(arena_name)
        ch = arena.channel("count")
        assert ch.dtype == np.int64 and ch.units == "counts" and ch.rate == 1e6 and ch.labels == ("counter",)
        seen = 0
        with ch.follow(policy="lossless", start="oldest", timeout=30.0) as f:
            for block in f:
                assert block.sequence == seen
                assert block.lost == 0
                check_counter(block)
                seen += 1
                if seen == blocks:
                    break
            assert f.lost == 0
            assert f.stats()["blocks_read"] == blocks
        assert seen == blocks
        assert writer.wait(timeout=60) == 0
        assert f"published {blocks}" in writer.stdout.read()
    finally:
        writer.kill()
        writer.wait()




def test_a_lapped_reader_reports_exactly_the_blocks_it_lost(arena_name):
    ring, blocks = 16, 1000
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", ring, "--blocks", 0).wait(timeout=60)
    arena = weir.Arena(arena_name)
    ch = arena.channel("count")
    with ch.follow(policy="lossy", start="oldest") as f:
        writer = start_writer(arena_name, "count", "--blocks", blocks)
        assert writer.wait(timeout=60) == 0
        first = f.next(timeout=5.0)
        assert first.lost == blocks - ring
        assert first.sequence == blocks - ring
        check_counter(first)
        rest = [f.next(timeout=0) for _ in range(ring - 1)]
        assert [b.sequence for b in rest] == list(range(blocks - ring + 1, blocks))
        assert all(b.lost == 0 for b in rest)
        assert f.next(timeout=0) is None
        assert f.lost == blocks - ring
        assert f.stats()["blocks_lost"] == blocks - ring
    # An unregistered range read says the same: the oldest blocks are overwritten, the rest copied.
    got = ch.read(2 * ring, start=blocks - 2 * ring)
    assert got.lost == ring and len(got) == ring
    assert list(got.sequences) == list(range(blocks - ring, blocks))
    assert np.array_equal(got.data, np.arange((blocks - ring) * BLOCK, blocks * BLOCK))


def test_a_writer_killed_mid_block_never_hands_python_a_torn_block(arena_name):
    blocks = 40
    writer = start_writer(arena_name, "count", "--block", BLOCK, "--ring", 64, "--blocks", blocks,
                          "--kill-mid-block")
    writer.wait(timeout=60)
    assert writer.returncode == -9  # SIGKILL, with block `blocks` claimed and half written
    arena = weir.Arena(arena_name)
    ch = arena.channel("count")
    with ch.follow(policy="lossless", start="oldest") as f:
        for s in range(blocks):
            block = f.next(timeout=5.0)
            assert block.sequence == s
            check_counter(block)
        assert f.next(timeout=0.2) is None  # the half block is never published
    with ch.follow(policy="lossy", start=blocks, view=True) as f:
        assert f.next(timeout=0.2) is None
    got = ch.read(1, start=blocks)
    assert len(got) == 0 and got.unwritten == 1 and got.data.size == 0
    latest = ch.latest()
    assert latest.sequence == blocks - 1
    check_counter(latest)


def test_a_view_reports_when_the_writer_reuses_its_slot(arena_name):
    ring = 8
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", ring, "--blocks", 1).wait(timeout=60)
    arena = weir.Arena(arena_name)
    ch = arena.channel("count")
    with ch.follow(policy="lossy", start="oldest", view=True) as f:
        view = f.next(timeout=5.0)
        assert not view.data.flags.writeable
        check_counter(view)
        assert view.still_valid()
        assert start_writer(arena_name, "count", "--blocks", 2 * ring).wait(timeout=60) == 0
        assert not view.still_valid()  # what was read from it now must be discarded
        assert view.release() is False


def test_read_and_latest_return_numpy_with_the_channels_metadata(arena_name):
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", 32, "--blocks", 10).wait(timeout=60)
    ch = weir.Arena(arena_name).channels["count"]
    got = ch.read(4)
    assert list(got.sequences) == [6, 7, 8, 9]
    assert np.array_equal(got.data, np.arange(6 * BLOCK, 10 * BLOCK))
    assert got.units == "counts" and got.rate == 1e6 and got.labels == ("counter",) and got.axis is None
    assert (got.meta["realtime_ns"] > 0).all() and (np.diff(got.meta["first_sample"]) == BLOCK).all()
    latest = ch.latest()
    assert latest.sequence == 9 and latest.first_sample == 9 * BLOCK
    env = ch.envelope(10 * BLOCK, columns=10)
    assert env.mins[0] == 0 and env.maxs[-1] == 10 * BLOCK - 1


def test_read_of_one_block_fills_a_fresh_array_or_the_callers_buffer(arena_name):
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", 32, "--blocks", 10).wait(timeout=60)
    ch = weir.Arena(arena_name).channel("count")
    expected = np.arange(3 * BLOCK, 4 * BLOCK)
    got = ch.read(1, start=3)
    assert len(got) == 1 and list(got.sequences) == [3] and got.meta["first_sample"][0] == 3 * BLOCK
    assert got.data.dtype == np.int64 and np.array_equal(got.data, expected)
    raw = np.zeros(ch.block_bytes + 64, dtype=np.uint8)
    got = ch.read(1, start=3, out=raw)
    assert np.shares_memory(got.data, raw) and np.array_equal(got.data, expected)
    typed = np.zeros(BLOCK + 8, dtype=np.int64)  # any dtype: filled byte for byte, data as long as the block
    got = ch.read(1, start=3, out=typed)
    assert np.shares_memory(got.data, typed) and np.array_equal(got.data, expected)
    with pytest.raises(ValueError, match="at least"):
        ch.read(1, out=np.zeros(ch.block_bytes - 1, dtype=np.uint8))
    got = ch.read(1, start=10)  # not written yet
    assert len(got) == 0 and got.unwritten == 1 and got.data.size == 0


def test_reads_into_the_same_buffer_again_check_it_each_time(arena_name):
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", 32, "--blocks", 10).wait(timeout=60)
    ch = weir.Arena(arena_name).channel("count")
    raw = np.zeros(2 * ch.block_bytes + 3, dtype=np.uint8)  # not a whole number of samples past two blocks
    for s in (1, 5, 2):
        got = ch.read(1, start=s, out=raw)
        assert np.shares_memory(got.data, raw) and np.array_equal(got.data, np.arange(s * BLOCK, (s + 1) * BLOCK))
        assert list(got.sequences) == [s] and got.meta["first_sample"][0] == s * BLOCK
    got = ch.read(2, start=6, out=raw)  # the same buffer, two blocks
    assert np.array_equal(got.data, np.arange(6 * BLOCK, 8 * BLOCK)) and list(got.sequences) == [6, 7]
    with pytest.raises(ValueError, match="at least"):
        ch.read(3, start=0, out=raw)  # checked against what this read needs, not the last one
    other = np.zeros(BLOCK, dtype=np.int64)
    got = ch.read(1, start=9, out=other)
    assert np.shares_memory(got.data, other) and not np.shares_memory(got.data, raw)
    assert np.array_equal(other, np.arange(9 * BLOCK, 10 * BLOCK))
    other.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        ch.read(1, start=9, out=other)
    with pytest.raises(ValueError, match="contiguous"):
        ch.read(1, start=9, out=np.zeros(2 * BLOCK, dtype=np.int64)[::2])


def test_a_range_read_past_the_head_copies_what_was_written(arena_name):
    start_writer(arena_name, "count", "--block", BLOCK, "--ring", 32, "--blocks", 10).wait(timeout=60)
    ch = weir.Arena(arena_name).channel("count")
    out = np.full(4 * BLOCK, -1, dtype=np.int64)
    got = ch.read(4, start=8, out=out)
    assert len(got) == 2 and got.unwritten == 2 and got.lost == 0
    assert list(got.sequences) == [8, 9] and list(got.meta["state"]) == [0, 0, 2, 2]
    assert np.array_equal(got.data, np.arange(8 * BLOCK, 10 * BLOCK))
    assert (out[2 * BLOCK:] == -1).all()  # nothing written past the copied blocks
    assert got.units == "counts" and got.channel == "count" and got.dtype == np.int64


def test_a_sim_channel_follows_with_rate_units_and_labels(arena_name):
    from conftest import run_weir
    run_weir("sim", arena_name, "adc0", "--rate", 1e5, "--block", 512, "--blocks", 20, "--fast",
             "--signal", "sine")
    ch = weir.Arena(arena_name).channel("adc0")
    assert (ch.dtype, ch.units, ch.rate, ch.block_size) == (np.float32, "V", 1e5, 512)
    assert "sim" in ch.labels
    got = ch.read(20)
    assert len(got) == 20 and got.data.shape == (20 * 512,)
    assert np.abs(got.data).max() <= 1.0 + 1e-6
