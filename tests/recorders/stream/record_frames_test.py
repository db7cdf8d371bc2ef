#!/usr/bin/python3
"""A frame channel recorded by a real `weir record`: a simulated sine on adc0, the fft shard's PSD
adc0.psd, both recorded losslessly. Checks with h5py that the PSD is a 2-D dataset (spectra x
N/2+1) with its NeXus axes, that its frequency axis is k*fs/N, and that its averaged spectrum
equals a Welch estimate computed here from the recorded adc0 samples with the fft shard's
documented definition (dsp_shards/spectral/README.md: periodic Hann, hop N/2, one-sided,
psd = c_k <|X_k|^2> / (N cg)^2 / (enbw fs / N)); that h5dump -H reads the file; and that
`weir replay` brings the PSD channel back framed, with its axis.

Usage: record_frames_test.py WEIR H5DUMP
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

WEIR, H5DUMP = sys.argv[1], sys.argv[2]
FS, BLOCK, N, SINE_HZ, BLOCKS = 20000.0, 512, 256, 1000.0, 200
NAME = "weir_frames_test_%d" % os.getpid()
errors = []


def check(condition, message):
    if not condition:
        errors.append(message)


def run(*args):
    subprocess.run([WEIR, *args], check=True, stdout=subprocess.DEVNULL)


def wait_for(predicate, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def listing():
    return subprocess.run([WEIR, "ls", NAME], capture_output=True, text=True).stdout


def record(out):
    sim = ["sim", NAME, "adc0", "--rate", str(FS), "--block", str(BLOCK), "--signal", "sine",
           "--frequency", str(SINE_HZ), "--amplitude", "2", "--fast"]
    run("create", NAME)
    run(*sim, "--blocks", "1")  # creates adc0
    shard = subprocess.Popen([WEIR, "shard", NAME, "fft", "-i", "adc0", "--policy", "lossless", "-p", "size=%d" % N,
                              "-p", "window=hann", "-p", "overlap=0.5", "-p", "spectrum=psd"],
                             stdout=subprocess.DEVNULL)
    recorder = None
    try:
        if not wait_for(lambda: "adc0.psd" in listing()):
            raise SystemExit("error: the fft shard made no adc0.psd")
        recorder = subprocess.Popen([WEIR, "record", NAME, "--channels", "adc0", "adc0.psd", "--out", out,
                                     "--flush-ms", "100"], stdout=subprocess.DEVNULL)
        if not wait_for(lambda: "record" in listing()):
            raise SystemExit("error: the recorder did not attach")
        run(*sim, "--blocks", str(BLOCKS))
        time.sleep(1.0)  # the shard and the recorder catch up (both lossless: nothing is dropped)
    finally:
        for p in (recorder, shard):
            if p is not None:
                p.send_signal(signal.SIGINT)
                p.wait(timeout=30)
        subprocess.run([WEIR, "rm", NAME], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def welch(x):
    n = np.arange(N)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / N)  # periodic Hann
    cg = w.mean()
    enbw = N * np.sum(w * w) / np.sum(w) ** 2
    hop = N - round(0.5 * N)
    frames = [x[i:i + N] for i in range(0, len(x) - N + 1, hop)]
    spectra = np.abs(np.fft.rfft(np.array(frames) * w, axis=1)) ** 2
    c = np.full(N // 2 + 1, 2.0)
    c[0] = c[-1] = 1.0
    psd = c * spectra / (N * cg) ** 2 / (enbw * FS / N)
    return psd, len(frames)


def replayed(path):
    """Replays the recording into a fresh arena: the PSD channel comes back framed, with its axis."""
    arena = NAME + "_replay"
    try:
        run("create", arena)
        run("replay", path, arena, "--speed", "max")
        ls = json.loads(subprocess.run([WEIR, "ls", arena, "--json"], capture_output=True, text=True, check=True).stdout)
        channels = {c["name"]: c for c in ls["channels"]}
        frame = channels.get("adc0.psd", {}).get("frame")
        check(frame is not None and frame["frames_per_block"] == 1 and frame["frame_elements"] == N // 2 + 1,
              "replayed adc0.psd frame %s" % frame)
        if frame is not None:
            axis = frame["axis"]
            check(axis["name"] == "frequency" and axis["units"] == "Hz" and abs(axis["step"] - FS / N) < 1e-9,
                  "replayed axis %s" % axis)
        check(channels.get("adc0", {}).get("frame") is None, "the sample channel came back framed")
        written = channels.get("adc0.psd", {}).get("blocks_written")
        check(written is not None and written > 0, "nothing replayed into adc0.psd (%s)" % written)
    finally:
        subprocess.run([WEIR, "rm", arena], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    with tempfile.TemporaryDirectory() as out:
        record(out)
        files = sorted(glob.glob(os.path.join(out, "*.h5")))
        check(len(files) == 1, "one file expected, got %s" % files)
        path = files[0]
        with h5py.File(path, "r") as f:
            check(f.attrs["weir_format"] == "weir-recording 2.0", "format %r" % f.attrs["weir_format"])
            g = f["entry/adc0.psd"]
            data = g["data"]
            bins = N // 2 + 1
            check(data.ndim == 2 and data.shape[1] == bins, "psd shape %s, want (frames, %d)" % (data.shape, bins))
            check(data.maxshape == (None, bins), "psd maxshape %s" % (data.maxshape,))
            check(data.chunks is not None and data.chunks[1] == bins, "psd chunks %s" % (data.chunks,))
            check(data.attrs["frame_elements"] == bins, "frame_elements %s" % data.attrs["frame_elements"])
            check(data.attrs["frames_per_block"] == 1, "frames_per_block %s" % data.attrs["frames_per_block"])
            check(data.attrs["long_name"] != "", "no long_name")
            axes = [a.decode() if isinstance(a, bytes) else a for a in g.attrs["axes"]]
            check(axes == ["time", "frequency"], "axes %s" % axes)
            check(g.attrs["time_indices"] == 0 and g.attrs["frequency_indices"] == 1, "axis indices")
            freq = g["frequency"][()]
            check(freq.shape == (bins,) and np.allclose(freq, np.arange(bins) * FS / N, rtol=0, atol=1e-9),
                  "frequency axis is not k*fs/N")
            check(g["frequency"].attrs["units"] == "Hz", "frequency units %r" % g["frequency"].attrs["units"])
            t = g["time"][()]
            # The axis's origin is the file's start, or the first block's stamp when that is earlier (a
            # spectrum is stamped at its window's first sample, which may precede the file).
            realtime = g["block_realtime_ns"][()].astype(np.int64)
            stamps = (realtime - min(int(f.attrs["start_ns"]), int(realtime[0]))) / 1e9
            check(t.shape == (data.shape[0],) and np.allclose(t, stamps, rtol=0, atol=1e-9),
                  "time axis is not each spectrum's block stamp: %s" % t[:4])
            samples = g["block_samples"][()]
            check(np.all(samples == bins), "block_samples %s" % np.unique(samples))
            check(np.array_equal(g["block_offset"][()], np.arange(len(samples)) * bins), "block_offset")
            psd = data[()].astype(np.float64)
            x = f["entry/adc0/data"][()].reshape(-1).astype(np.float64)  # whole blocks: rows in order
            ref, frames = welch(x)
            check(abs(len(psd) - frames) <= 1, "%d spectra recorded, %d frames in the samples" % (len(psd), frames))
            got, want = psd.mean(axis=0), ref.mean(axis=0)
            peak = want.max()
            check(int(np.argmax(got)) == int(np.argmax(want)), "peak bin %d, want %d" % (np.argmax(got), np.argmax(want)))
            err = np.abs(got - want).max() / peak
            check(err < 5e-3, "averaged PSD differs from Welch by %.3g of the peak" % err)
            # A sine of peak A: its power A^2/2 is the PSD summed over bins times the bin width.
            power = got.sum() * FS / N
            check(abs(power - 2.0) < 0.02, "sine power %.4f, want A^2/2 = 2" % power)
            print("ok psd %s, %d spectra, max error %.2g of the peak" % (data.shape, len(psd), err))
        dump = subprocess.run([H5DUMP, "-H", path], capture_output=True, text=True)
        check(dump.returncode == 0 and "frequency" in dump.stdout, "h5dump -H failed: %s" % dump.stderr[-400:])
        replayed(path)
    for e in errors:
        print("error " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
