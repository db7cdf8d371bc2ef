"""Reading weir recordings (HDF5, docs/design/recording.md) with h5py: a channel's samples and the
true acquisition time of each, from the NeXus axes alone, after gaps too.

    from weir.recording import read_channel
    rec = read_channel("runs/detector_run000001_0000.h5", "det0")
    plt.plot(rec.times_ns / 1e9 - rec.times_ns[0] / 1e9, rec.samples)

Format 2 writes a row per block: `time` (one value a row, s since `time@start`) and
`time_in_block` (one value a column), so sample (r, c) was taken at time[r] + time_in_block[c];
`block_offset` and `block_samples` say which columns of a row are samples (a short block's row is
padded). Format 1 files (a 1-D `data`) are read through their block tables. h5py comes from
Debian's python3-h5py; it is imported only when this module is.
"""
from dataclasses import dataclass

import numpy as np

import h5py

NS_PER_S = 1_000_000_000


@dataclass
class RecordedChannel:
    """A channel of one recording file: its samples in order, each one's acquisition time (ns since
    the epoch, int64), and the block tables' gaps."""
    name: str
    samples: np.ndarray
    times_ns: np.ndarray
    rate_hz: float
    units: str
    gaps: np.ndarray


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _epoch_ns(iso):
    """ISO 8601 UTC with up to ns ("2026-12-04T15:44:11.123456789Z") -> int ns since the epoch."""
    return int(np.datetime64(_text(iso).rstrip("Z"), "ns").astype(np.int64))


def _escape(name):
    return name.replace("%", "%25").replace("/", "%2F")


def read_channel(path, channel):
    """The samples of `channel` in the recording file `path` and the true time of each. Raises
    KeyError naming the channel and the file when the file has no such channel, and ValueError
    naming the file when its format is newer than this module reads."""
    with h5py.File(path, "r") as f:
        link = _escape(channel) if channel != "." else "%2E"
        if "entry" not in f or link not in f["entry"]:
            raise KeyError(f"'{path}' has no channel '{channel}'")
        g = f["entry"][link]
        data = g["data"]
        offsets = g["block_offset"][...].astype(np.int64)
        counts = g["block_samples"][...].astype(np.int64)
        n = min(len(offsets), len(counts), len(g["block_sequence"]))
        offsets, counts = offsets[:n], counts[:n]
        total = int(counts.sum())
        # Each sample's place in data read flat: its block's offset + its index in the block.
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if n else np.zeros(0, dtype=np.int64)
        place = np.repeat(offsets - starts, counts) + np.arange(total)
        samples = data[...].reshape(-1)[place] if total else np.zeros(0, dtype=data.dtype)
        rate = float(data.attrs["sample_rate_hz"])
        time = g["time"]
        major = int(_text(f.attrs.get("weir_format", "weir-recording 1")).split()[-1].split(".")[0])
        if major == 2:
            # Format 2: the row's time and the column's (a frame channel's columns are its axis, so
            # its elements take the row's time plus their place in the flat stream).
            origin = _epoch_ns(time.attrs["start"])
            cols = data.shape[1]
            row, col = place // cols, place % cols
            axes = [_text(a) for a in np.atleast_1d(g.attrs.get("axes", []))]
            if len(axes) == 2 and axes[1] == "time_in_block":
                within = g["time_in_block"][...][col]
            else:
                within = col / rate
            times = origin + np.round((time[...][row] + within) * NS_PER_S).astype(np.int64)
        elif major == 1:
            # Format 1: (start, step) holds only until a gap; the block tables are exact.
            stamps = g["block_realtime_ns"][...].astype(np.int64)[:n]
            in_block = np.arange(total) - np.repeat(starts, counts)
            times = np.repeat(stamps, counts) + np.round(in_block * NS_PER_S / rate).astype(np.int64)
        else:
            raise ValueError(f"'{path}' is recording format {major}: this module reads formats 1 and 2")
        return RecordedChannel(name=channel, samples=samples, times_ns=times, rate_hz=rate,
                               units=_text(data.attrs.get("units", "")), gaps=g["gaps"][...])
