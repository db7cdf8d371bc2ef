"""weir.recording against a real recording: the counter writer's i64 samples (sample k holds k),
blocks stamped as they are published with pauses between them, recorded by a real `weir record`;
read back, every sample is there in order, and each one's time from the NeXus axes is its block's
stamp plus its place, which a (start, step) axis would miss after the pauses."""
import glob
import signal
import subprocess

import numpy as np
import pytest

from conftest import WEIR, start_writer

h5py = pytest.importorskip("h5py", reason="Debian's python3-h5py is needed to read recordings")


def test_samples_and_true_times_of_a_recorded_channel(arena_name, tmp_path):
    from weir.recording import read_channel
    recorder = subprocess.Popen([WEIR, "record", arena_name, "--channels", "cnt", "--out", str(tmp_path),
                                 "--flush-ms", "50", "--wait-for-channels"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        writer = start_writer(arena_name, "cnt", "--block", "500", "--ring", "64", "--blocks", "60",
                              "--wait-lossless", "--sleep-us", "3000")
        assert writer.wait(timeout=60) == 0, writer.stderr.read()
    finally:
        recorder.send_signal(signal.SIGINT)
        out, err = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, err
    files = sorted(glob.glob(str(tmp_path / "*.h5")))
    assert len(files) == 1, files
    rec = read_channel(files[0], "cnt")
    assert rec.samples.dtype == np.int64
    assert np.array_equal(rec.samples, np.arange(60 * 500)), "samples missing or out of order"
    with h5py.File(files[0], "r") as f:
        stamps = f["entry/cnt/block_realtime_ns"][...].astype(np.int64)
    want = np.repeat(stamps, 500) + np.round(np.tile(np.arange(500), 60) * 1e9 / rec.rate_hz).astype(np.int64)
    assert np.array_equal(rec.times_ns, want), "a sample's time is not its block's stamp + its place"
    # The writer paused between blocks: one start + k / rate would be off by the pauses.
    nominal = rec.times_ns[0] + np.round(np.arange(len(rec.samples)) * 1e9 / rec.rate_hz).astype(np.int64)
    assert np.max(np.abs(rec.times_ns - nominal)) > 1_000_000
    with pytest.raises(KeyError, match="no channel 'nope'"):
        read_channel(files[0], "nope")
