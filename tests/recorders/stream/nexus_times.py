#!/usr/bin/python3
"""Reads a channel's sample times as a generic NeXus reader does, from the standard attributes
alone (the NXdata's @signal, @axes, @AXISNAME_indices and the axes' lengths, the time axis's
@start), and compares them with the true acquisition times the writer recorded; also reports the
time axes' share of the file.

Usage: nexus_times.py FILE CHANNEL TRUTH RATE_HZ
TRUTH: a text file of "first_sample_index realtime_ns" per block the writer published; the data's
values are each sample's stream index (f32, exact below 2^24), so every sample says which it is.
Prints "ok times N samples, max error E s, within one period: P %" and
"ok size time_axes B bytes of F (X %), data D bytes", or "error ..." lines, and exits 1 on an error.
"""
import os
import sys

import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    path, channel, truth_path, rate = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    truth = np.loadtxt(truth_path, dtype=np.int64, ndmin=2)
    first_index, stamp_ns = truth[:, 0], truth[:, 1]
    errors = []
    with h5py.File(path, "r") as f:
        g = f["entry"][channel]
        signal = g[text(g.attrs["signal"])]
        axes = [text(a) for a in np.atleast_1d(g.attrs["axes"])]
        if len(axes) != signal.ndim:
            errors.append(f"{len(axes)} axes for a {signal.ndim}-D signal")
        # The time of element (i, j, ...): the sum of every axis in seconds at its index, each axis
        # scaling the dimension its @AXISNAME_indices names; every axis's length is that dimension's.
        start_ns = None
        grid = np.zeros(signal.shape)
        for name in axes:
            axis = g[name]
            dim = int(g.attrs[name + "_indices"])
            if axis.shape != (signal.shape[dim],):
                errors.append(f"axis {name} has {axis.shape} values for dimension {dim} of {signal.shape}")
                continue
            if text(axis.attrs.get("units", "")) != "s":
                errors.append(f"axis {name} is not in s")
                continue
            if "start" in axis.attrs:
                start_ns = np.datetime64(text(axis.attrs["start"]).rstrip("Z"), "ns").astype(np.int64)
            shape = [1] * signal.ndim
            shape[dim] = -1
            grid = grid + axis[...].reshape(shape)
        values = signal[...]
        real = ~np.isnan(values)  # a short block's row is padded with NaN
        index = values[real].astype(np.int64)
        times_ns = start_ns + np.round(grid[real] * 1e9).astype(np.int64)
        block = np.searchsorted(first_index, index, side="right") - 1
        true_ns = stamp_ns[block] + np.round((index - first_index[block]) * 1e9 / rate).astype(np.int64)
        error = np.abs(times_ns - true_ns)
        period_ns = 1e9 / rate
        within = float(np.mean(error < period_ns)) * 100 if len(error) else 0.0
        if len(error) == 0:
            errors.append("no samples")
        elif within < 100.0:
            errors.append(f"{100 - within:.4f} % of samples are a period or more off, up to {error.max()} ns")
        print(f"ok times {len(error)} samples, max error {error.max() / 1e9 if len(error) else 0:.3g} s, "
              f"within one period: {within:.4f} %")
        axes_bytes = sum(g[name].id.get_storage_size() for name in axes)
        data_bytes = signal.id.get_storage_size()
    file_bytes = os.path.getsize(path)
    print(f"ok size time_axes {axes_bytes} bytes of {file_bytes} ({100.0 * axes_bytes / file_bytes:.3f} %), "
          f"data {data_bytes} bytes")
    for e in errors:
        print("error " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
