#!/usr/bin/python3
"""Checks an MCA spectrum recorded from the detector bench (format 1.2), with h5py and numpy:
check_spectrum.py DIR KEY BINS RANGE LINES... [--energy=A0,A1[,A2]]

- the array key KEY (det0.spectrum) is logged as (changes x BINS) uint32, whole;
- the last spectrum's sum + the last <x>.out_of_range is the last <x>.counts, exactly: counts is
  every accepted pulse, out-of-range heights included, and the mca writes the three from one state
  in each publish. Rows of equal time need not match (the recorder reads the keys one by one, and
  may read them across two publishes), but the last rows do: `weir run` stops the shards before the
  recorders, whose final pass then logs every key's last value, all of the shard's last publish.
  out_of_range stays under 2 % of counts (pile-up sums above RANGE);
- /entry/KEY is an NXdata whose `counts` (units "counts") is the last logged spectrum and whose axis
  is the last logged KEY_axis, which is the mca's calibration: bin centres h = (i + 0.5) * RANGE / BINS
  named `pulse_height` in the input's units (2.0) or, with --energy (the mca's `energy`), the energies
  A0 + A1 h + A2 h^2 named `energy` in keV;
- every pulse the mca counted is one event of /entry/<x>.pulses_events (NXevent_data): as many
  events as the last counts + pileups, as many flagged pile-up as pileups, out of range as
  out_of_range, and the unflagged ones' heights histogram to the last spectrum exactly;
- the spectrum's largest peaks are where the simulator's lines (LINES, heights after the
  trapezoid: the line times the shaper's 1.037, dsp_shards/events/README.md) fall, within a few bins.
Exits non-zero with a message on the first failure."""
import glob
import sys

import h5py
import numpy as np

TRAPEZOID_GAIN = 1.037  # the trapezoid's measure of the simulator's peak-normalised pulse
PEAK_TOLERANCE_BINS = 4


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main():
    energy = [float(x) for a in sys.argv if a.startswith("--energy=") for x in a[len("--energy="):].split(",")]
    argv = [a for a in sys.argv if not a.startswith("--energy=")]
    directory, key, bins, full_range = argv[1], argv[2], int(argv[3]), float(argv[4])
    lines = [float(x) for x in argv[5:]]
    axis_name = "energy" if energy else "pulse_height"
    a0, a1, a2 = (energy + [0.0, 0.0, 0.0])[:3] if energy else (0.0, 1.0, 0.0)
    base = key[: -len(".spectrum")]
    files = sorted(glob.glob(directory + "/**/*.h5", recursive=True))
    check(files, "no HDF5 file under " + directory)
    spectra, sums, counts, out_of_range, pileups = [], [], [], [], []
    heights, flags = [], []
    units_seen = set()
    last = None
    for name in files:
        with h5py.File(name, "r") as f:
            check(text(f.attrs["weir_format"]) == "weir-recording 2.0", name + ": weir_format")
            events = f["entry"].get(base + ".pulses_events")
            if events is not None:
                check(text(events.attrs["NX_class"]) == "NXevent_data", name + ": events NX_class")
                n = len(events["event_time_offset"])
                check(len(events["event_id"]) == n and len(events["pulse_height"]) == n, name + ": event lengths")
                check(len(events["event_index"]) == len(events["event_time_zero"]), name + ": pulse lengths")
                heights.append(events["pulse_height"][:])
                flags.append(events["event_flags"][:])
            if "keys" not in f["entry"]:
                continue  # opened before the shard made its keys: a later file logs them
            keys = f["entry/keys"]
            counts += list(keys[base + ".counts"]["value"][:])
            out_of_range += list(keys[base + ".out_of_range"]["value"][:])
            pileups += list(keys[base + ".pileups"]["value"][:])
            # The shard's keys carry their units (the host writes <key>_units from each key output's units).
            for suffix, want in ((".live_s", "s"), (".dead_s", "s"), (".counts", "counts"), (".pileups", "counts")):
                if base + suffix in keys and "units" in keys[base + suffix]["value"].attrs:
                    check(text(keys[base + suffix]["value"].attrs["units"]) == want, name + ": units of " + suffix)
                    units_seen.add(suffix)
            if key not in keys or keys[key]["value"].ndim != 2:
                continue  # the key was not an array yet when this file opened
            log = keys[key]
            value = log["value"]
            check(value.dtype == np.uint32, "%s: %s dtype %s" % (name, key, value.dtype))
            check(value.shape[1] == bins, "%s: %s has %d bins, not %d" % (name, key, value.shape[1], bins))
            check(value.shape[0] == log["time"].shape[0], name + ": value and time rows differ")
            check(text(value.attrs["dtype"]) == "u32", name + ": dtype attribute")
            check(list(value.attrs["shape"]) == [bins], name + ": shape attribute")
            check(int(log.attrs["refused_rows"]) == 0, name + ": refused rows")
            rows = value[:]
            spectra.append(rows)
            sums += [int(r.sum()) for r in rows]
            axis_log = keys[key + "_axis"]["value"]
            check(axis_log.dtype == np.float32 and axis_log.shape[1] == bins, name + ": axis key's shape")
            axis = axis_log[-1] if axis_log.shape[0] else None
            units = keys[key + "_axis_units"]["value"]
            plot = f["entry/" + key]
            check(text(plot.attrs["NX_class"]) == "NXdata", name + ": NX_class")
            check(text(plot.attrs["signal"]) == "counts", name + ": signal")
            check(text(plot.attrs["axes"]) == axis_name, name + ": axes " + text(plot.attrs["axes"]))
            check(int(plot.attrs[axis_name + "_indices"]) == 0, name + ": " + axis_name + "_indices")
            check(text(plot["counts"].attrs["units"]) == "counts", name + ": counts' units")
            check(plot["counts"].dtype == np.uint32 and plot["counts"].shape == (bins,), name + ": counts' shape")
            if len(rows):
                check(np.array_equal(plot["counts"][:], rows[-1]), name + ": counts is not the last spectrum")
            if axis is not None:
                check(np.array_equal(plot[axis_name][:], axis), name + ": the axis is not the recorded axis key")
                h = (np.arange(bins) + 0.5) * full_range / bins
                want = a0 + a1 * h + a2 * h * h
                check(np.allclose(axis, want, rtol=1e-6), name + ": axis is not the calibrated bin centres")
            if units.shape[0]:
                check(text(plot[axis_name].attrs["units"]) == text(units[-1]), name + ": axis units")
                check(text(units[-1]) in text(plot[axis_name].attrs["long_name"]), name + ": axis long_name")
                check((text(units[-1]) == "keV") == bool(energy), name + ": axis units " + text(units[-1]))
            last = rows[-1] if len(rows) else last
    check(last is not None, "no spectrum recorded")
    check(counts, "no counts recorded")
    check(out_of_range, "no out_of_range recorded")
    last_counts, last_out = int(counts[-1]), int(out_of_range[-1])
    check(sums[-1] + last_out == last_counts,
          "the last spectrum holds %d counts and out_of_range is %d, but counts is %d"
          % (sums[-1], last_out, last_counts))
    check(last_out <= 0.02 * last_counts, "%d of %d counts out of range" % (last_out, last_counts))
    check(all(b >= a for a, b in zip(sums, sums[1:])), "the spectrum lost counts between changes")
    check(sums[-1] > 1000, "only %d counts" % sums[-1])
    check(units_seen == {".live_s", ".dead_s", ".counts", ".pileups"}, "keys logged without units: %s" % units_seen)
    # The events: every pulse counted, flagged as the counters count it, binned as the spectrum.
    check(heights, "no NXevent_data for " + base + ".pulses")
    h, fl = np.concatenate(heights), np.concatenate(flags)
    piled, oor = int(np.count_nonzero(fl & 1)), int(np.count_nonzero((fl & 2) & ~(fl & 1)))
    check(len(h) == last_counts + int(pileups[-1]),
          "%d events, but counts %d + pileups %d" % (len(h), last_counts, int(pileups[-1])))
    check(piled == int(pileups[-1]) and oor == last_out, "events flagged %d pile-up, %d out of range" % (piled, oor))
    binned = np.bincount(np.minimum((h[fl == 0] * (bins / full_range)).astype(np.int64), bins - 1), minlength=bins)
    check(np.array_equal(binned, last.astype(np.int64)), "the events' heights do not histogram to the last spectrum")
    # The largest peaks, largest first: each taken out with its neighbourhood before the next.
    smooth = np.convolve(last.astype(np.float64), np.ones(3), mode="same")
    peaks = []
    for _ in lines:
        i = int(np.argmax(smooth))
        peaks.append(i)
        smooth[max(0, i - 20) : i + 21] = 0
    expected = [line * TRAPEZOID_GAIN / (full_range / bins) - 0.5 for line in lines]
    for want in expected:
        near = min(peaks, key=lambda p: abs(p - want))
        check(abs(near - want) <= PEAK_TOLERANCE_BINS, "no peak near bin %.1f: peaks at %s" % (want, peaks))
    print("spectrum ok: %d files, %d spectra, %d counts + %d out of range, %d events, peaks at %s (expected %s)"
          % (len(files), len(sums), sums[-1], last_out, len(h), sorted(peaks), ["%.1f" % e for e in expected]))


if __name__ == "__main__":
    main()
