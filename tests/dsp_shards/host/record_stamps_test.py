#!/usr/bin/python3
"""The fft shard's spectra as a recording holds them, from a real `weir run` (simulator, fft shard,
lossless recorder), read back with h5py: record_stamps_test.py WEIR

- the time of every recorded det0 sample is known exactly from its block's stamp:
  t(i) = block_realtime_ns[b] + round((i - first sample of b) * 1e9 / rate) (a lossless
  recorder: the blocks follow each other, so block b's first sample is the sum of the earlier
  block_samples);
- every spectrum row's block_realtime_ns is the time of some recorded det0 sample (its window's
  first), and full windows start exactly `averages * hop` samples apart;
- the last row is flagged partial (block_flags bit 1), starts where the next window would (or is
  one frame of the last N samples), and covers the input up to the last recorded sample (its
  window is at most one full span long and at least one frame);
- every row but the last is not partial (the run has no gap), and det0.psd.window_s is the full span.
Exits non-zero with a message on the first failure."""
import glob
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

RATE = 51200.0
BLOCK = 1000
N = 512
HOP = 256
AVERAGES = 4
PARTIAL = 1 << 1  # core::kBlockPartialFlag


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    weir = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        arena = "stamprec%d" % os.getpid()
        pipeline = os.path.join(tmp, "stamps.lua")
        with open(pipeline, "w") as f:
            f.write('arena { name = "%s", channels = 8 }\n' % arena)
            f.write('channel "det0" { dtype = "f32", rate = %g, block = %d, ring = 256, units = "V" }\n' % (RATE, BLOCK))
            f.write('driver "sim" { channels = {"det0"}, signal = "sine", frequency = 2000, seed = 3 }\n')
            f.write('shard "fft" { input = "det0", size = %d, overlap = 0.5, average = "linear", averages = %d, '
                    'wisdom = "off", plan = "estimate", policy = "lossless" }\n' % (N, AVERAGES))
            f.write('record "hdf5" { channels = {"det0", "det0.psd"}, keys = {"det0.*"}, out = "%s/", '
                    'flush_ms = 200 }\n' % os.path.join(tmp, "runs"))
        run = subprocess.run([weir, "run", pipeline, "--duration", "2", "--status-every", "0"], capture_output=True,
                             text=True, timeout=90)
        if run.returncode != 0:
            fail("weir run exited %d: %s %s" % (run.returncode, run.stdout[-2000:], run.stderr[-2000:]))
        files = sorted(glob.glob(os.path.join(tmp, "runs", "**", "*.h5"), recursive=True))
        if not files:
            fail("no file written")
        # A run may span files (a new one opens when keys appear): the tables join in file order.
        rt, counts, stamps, flags, window_s = [], [], [], [], None
        for path in files:
            with h5py.File(path, "r") as f:
                if "entry/det0" in f:
                    rt.append(f["entry/det0/block_realtime_ns"][()].astype(np.int64))
                    counts.append(f["entry/det0/block_samples"][()].astype(np.int64))
                if "entry/det0.psd" in f:
                    stamps.append(f["entry/det0.psd/block_realtime_ns"][()].astype(np.int64))
                    flags.append(f["entry/det0.psd/block_flags"][()].astype(np.int64))
                keys = f["entry/keys"] if "entry/keys" in f else None
                for name in keys if keys is not None else []:
                    if keys[name].attrs.get("key") in (b"det0.psd.window_s", "det0.psd.window_s") and len(keys[name]["value"]):
                        window_s = keys[name]["value"][-1]
        rt, counts = np.concatenate(rt), np.concatenate(counts)
        stamps, flags = np.concatenate(stamps), np.concatenate(flags)
        # Stream index of each block's first sample (block_offset also counts a short row's padding).
        off = np.concatenate(([0], np.cumsum(counts)[:-1]))
        total = int(off[-1] + counts[-1])
        index = np.arange(total)
        block = np.searchsorted(off, index, side="right") - 1
        times = rt[block] + np.round((index - off[block]) * 1e9 / RATE).astype(np.int64)
        where = {int(t): int(i) for i, t in enumerate(times)}

        if len(stamps) < 10:
            fail("only %d spectra recorded" % len(stamps))
        first = [where.get(int(t)) for t in stamps]
        # Rows before the recorder's first det0 sample cannot be placed; every later one must be.
        placed = [k for k, i in enumerate(first) if i is not None]
        if not placed or placed[0] > 1 or placed != list(range(placed[0], len(stamps))):
            fail("spectrum stamps that are no recorded sample's time: rows %s of %d placed" %
                 (placed[:5], len(stamps)))
        span = (AVERAGES - 1) * HOP + N
        for k in placed[1:-1]:
            if first[k] - first[k - 1] != AVERAGES * HOP:
                fail("row %d starts %d samples after row %d, want %d" % (k, first[k] - first[k - 1], k - 1,
                                                                     AVERAGES * HOP))
        if not flags[-1] & PARTIAL:
            fail("the last spectrum is not flagged partial (flags %#x)" % flags[-1])
        if np.any(flags[:-1] & PARTIAL):
            fail("rows other than the last are flagged partial: %s" % np.nonzero(flags[:-1] & PARTIAL)[0])
        last = first[-1]
        # An unfinished average starts where the next window would; with no frame of it yet, the
        # partial spectrum is one frame of the last N samples.
        if last != first[-2] + AVERAGES * HOP and last != total - N:
            fail("the partial spectrum starts at sample %d: neither the next window (%d) nor the last N (%d)" %
                 (last, first[-2] + AVERAGES * HOP, total - N))
        if not (N <= total - last <= span):
            fail("the partial spectrum starts %d samples before the end; its window is %d .. %d" %
                 (total - last, N, span))
        if window_s is None or abs(window_s - span / RATE) > 1e-12:
            fail("det0.psd.window_s %s, want %g" % (window_s, span / RATE))
        print("ok %d spectra, %d samples; the last, partial, starts %d samples before the end" %
              (len(stamps), total, total - last))


if __name__ == "__main__":
    main()
