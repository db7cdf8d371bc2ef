#!/usr/bin/python3
"""Reads one weir recording with h5py, checks its layout against docs/design/recording.md and
prints what it found, one fact per line, for the C++ tests to compare:

  root NAME VALUE                  root attributes
  channel NAME KEY VALUE ...       per channel: blocks, samples, dtype, chunk, attributes
  seqs NAME RANGES                 block sequence numbers as ranges: 0-99,120-199
  gap NAME SEQUENCE BLOCKS REASON  one per gaps row
  key NAME rows N last VALUE       per key log
  error TEXT                       a layout violation

Usage: inspect_recording.py FILE... [--swmr] [--export DIR]
--swmr opens as a SWMR reader (a file a live or killed recorder still has marked);
--export writes each channel's recorded samples as raw native bytes to DIR/<channel>.bin.
With several files, each one's lines follow a "file PATH" line, and file i exports to DIR/i/.
"""
import os
import sys

import h5py
import hdf5plugin  # noqa: F401  the LZ4, bitshuffle and zstd filters a recording's data may use
import numpy as np

REASONS = ["lapped", "dropped_at_source", "recorder_restart", "recorder_stopped", "disk_error", "before_start",
           "recorder_down", "shutdown", "source_loss", "kernel_drop", "malformed", "late", "timeout",
           "driver_error", "sink_overflow", "disconnected"]  # format 1.5, then sink_overflow, disconnected; a row's name is read from reason_names
TABLES = ["block_sequence", "block_offset", "block_samples", "block_realtime_ns", "block_monotonic_ns",
          "block_flags"]
TABLE_TYPES = {"block_sequence": np.uint64, "block_offset": np.uint64, "block_samples": np.uint32,
               "block_realtime_ns": np.uint64, "block_monotonic_ns": np.uint64, "block_flags": np.uint32}
DTYPES = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32",
          "i64": "int64", "f32": "float32", "f64": "float64"}
UNWRITTEN_SEQUENCE = np.uint64(2**64 - 1)  # fill value of block_sequence
UNWRITTEN_REASON = 255                     # fill value of a gaps row's reason
errors = []


def text(value):
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    return str(value).rstrip("\0")


def check(condition, message):
    if not condition:
        errors.append(message)


def ranges(seqs):
    out, start, prev = [], None, None
    for s in seqs:
        if start is None:
            start = prev = s
        elif s == prev + 1:
            prev = s
        else:
            out.append(f"{start}-{prev}")
            start = prev = s
    if start is not None:
        out.append(f"{start}-{prev}")
    return ",".join(out) if out else "none"


def flat_samples(d, offsets, samples):
    """The recorded samples of a channel, in order: each block's block_samples elements from
    block_offset on in data read flat (format 2.0: a row per block or frame, short rows padded)."""
    total = int(samples.sum())
    if total == 0:
        return np.zeros(0, dtype=d.dtype)
    flat = d[...].reshape(-1)
    index = np.repeat(offsets - np.concatenate([[0], np.cumsum(samples)[:-1]]), samples) + np.arange(total)
    return flat[index]


def channel(name, g, export, start_ns):
    check(text(g.attrs.get("NX_class", "")) == "NXdata", f"{name}: NX_class is not NXdata")
    check(text(g.attrs.get("signal", "")) == "data", f"{name}: signal is not data")
    chan = text(g.attrs["channel"])
    d = g["data"]
    for attr in ["units", "sample_rate_hz", "labels", "dtype", "samples_per_block", "first_sample_time",
                 "first_sample_ns", "first_sample_index"]:
        check(attr in d.attrs, f"{chan}: data has no {attr} attribute")
    dtype = text(d.attrs["dtype"])
    if dtype == "c64":
        check(d.dtype.names == ("r", "i"), f"{chan}: c64 data is not the compound (r, i)")
    else:
        check(d.dtype == np.dtype(DTYPES[dtype]), f"{chan}: data dtype {d.dtype} is not {dtype}")
    spb = int(d.attrs["samples_per_block"])
    framed = "frame_elements" in d.attrs
    cols = int(d.attrs["frame_elements"]) if framed else spb
    check(d.ndim == 2 and d.chunks is not None and d.maxshape == (None, cols),
          f"{chan}: data is not chunked and extendible rows of {cols}: {d.shape} max {d.maxshape}")
    columns = {t: g[t][...] for t in TABLES}
    for t in TABLES:
        check(g[t].dtype == TABLE_TYPES[t], f"{chan}: {t} has dtype {g[t].dtype}")
    n = min(len(c) for c in columns.values())  # a crash may leave one table a row ahead of another
    unwritten = np.nonzero(columns["block_sequence"][:n] == UNWRITTEN_SEQUENCE)[0]
    if len(unwritten):  # rows a failed write extended but never filled: the file ends before them
        print(f"unwritten {name} rows {n - int(unwritten[0])}")
        n = int(unwritten[0])
    seq = columns["block_sequence"][:n]
    offsets = columns["block_offset"][:n].astype(np.int64)
    samples = columns["block_samples"][:n].astype(np.int64)
    total = int(samples.sum())
    rows = -(-samples // cols)  # a block's rows: a short block's last one is padded
    expected = np.concatenate([[0], np.cumsum(rows)[:-1]]) * cols if n else np.zeros(0, dtype=np.int64)
    check(np.array_equal(offsets, expected), f"{chan}: block_offset is not the row where each block starts")
    check(bool(np.all(np.diff(seq.astype(np.int64)) > 0)), f"{chan}: block_sequence does not increase")
    used = int(rows.sum())
    check(d.shape[0] >= used, f"{chan}: data holds {d.shape[0]} rows, the tables {used}")
    # The time axis: one value per row, each row's true time (its block's stamp, and a frame's place).
    time = g["time"]
    check(time.ndim == 1 and time.shape[0] >= used, f"{chan}: time has {time.shape} values for {used} rows")
    rate = float(d.attrs["sample_rate_hz"])
    realtime = columns["block_realtime_ns"][:n].astype(np.int64)
    origin = text(time.attrs.get("start", ""))  # the segment's start, or an earlier first block's stamp
    origin_ns = int(np.datetime64(origin.rstrip("Z"), "ns").astype(np.int64)) if origin else start_ns
    within = (np.arange(used) - np.repeat(expected // cols, rows)) * cols / rate
    if framed and d.dtype == np.float64 and cols == 4 and "event" in g:  # an event channel: each event's own time
        within = d[:used, 0] / 1e9 if used else np.zeros(0)
    want = np.repeat((realtime - origin_ns) / 1e9, rows) + within
    got = time[:used]
    check(bool(np.all(np.abs(got - want) <= 1e-9 + 1e-12 * np.abs(want))), f"{chan}: time is not each row's block stamp")
    axes = [text(a) for a in np.atleast_1d(g.attrs.get("axes", []))]
    check(len(axes) == 2 and axes[0] == "time" and axes[1] in g and g[axes[1]].shape == (cols,),
          f"{chan}: axes {axes} do not name (time, a column axis of {cols})")
    check(bool(np.all(samples <= spb)), f"{chan}: a block holds more than samples_per_block")
    gaps = g["gaps"]
    check(list(gaps.dtype.names) == ["sequence", "blocks", "reason", "realtime_ns"], f"{chan}: gaps fields")
    names = text(gaps.attrs.get("reason_names", "")).split(",")
    check(names == REASONS, f"{chan}: gaps reason_names {names}")
    rows = gaps[...]
    rows = rows[rows["reason"] != UNWRITTEN_REASON]
    compression = d.compression or "none"
    filters = "+".join(d._filters) or "none"  # the dataset's filter pipeline in order: shuffle+32004
    # Filters no plugin here decodes (zstd, 32015, has none in Debian 12): the data is not read.
    missing = [f for f in d._filters if f.isdigit() and not h5py.h5z.filter_avail(int(f))]
    readable = "+".join(missing) if missing else "yes"
    first_index = int(d.attrs["first_sample_index"])
    if n:
        check(text(d.attrs["first_sample_time"]).endswith("Z"), f"{chan}: first_sample_time not set")
    print(f"channel {chan} blocks {n} samples {total} data_len {d.shape[0] * cols} dtype {dtype} "
          f"chunk {d.chunks[0] * cols} compression {compression} filters {filters} readable {readable} spb {spb} "
          f"rate {float(d.attrs['sample_rate_hz'])!r} units {text(d.attrs['units']) or '-'} "
          f"labels {text(d.attrs['labels']) or '-'} first_sample_index {first_index} "
          f"first_seq {int(seq[0]) if n else -1} last_seq {int(seq[-1]) if n else -1} "
          f"gaps {len(rows)} gap_blocks {int(rows['blocks'].sum()) if len(rows) else 0} "
          f"policy {text(g.attrs.get('policy', '-'))}")
    print(f"seqs {chan} {ranges(int(s) for s in seq)}")
    for r in rows:
        reason = int(r["reason"])
        print(f"gap {chan} {int(r['sequence'])} {int(r['blocks'])} {names[reason] if reason < len(names) else reason}")
    if export and not missing:
        data = flat_samples(d, offsets, samples)
        with open(os.path.join(export, chan + ".bin"), "wb") as out:
            out.write(np.ascontiguousarray(data).tobytes())


def keys(g):
    check(text(g.attrs.get("NX_class", "")) == "NXcollection", "keys: NX_class is not NXcollection")
    for name, log in g.items():
        check(text(log.attrs.get("NX_class", "")) == "NXlog", f"key {name}: NX_class is not NXlog")
        t, v = log["time"][...], log["value"][...]
        check(len(t) == len(v), f"key {name}: time and value differ in length")
        last = text(v[-1]) if len(v) else "-"
        print(f"key {text(log.attrs['key'])} rows {len(v)} last {last}")


def main():
    args = sys.argv[1:]
    swmr = "--swmr" in args
    export = None
    if "--export" in args:
        export = args[args.index("--export") + 1]
        del args[args.index("--export"):args.index("--export") + 2]
    paths = [a for a in args if a != "--swmr"]
    for i, path in enumerate(paths):
        where = export
        if len(paths) > 1:
            print(f"file {path}")
            if export:
                where = os.path.join(export, str(i))
                os.makedirs(where, exist_ok=True)
        inspect(path, swmr, where)
        for e in errors:
            print(f"error {e}")
        errors.clear()


def inspect(path, swmr, export):
    with h5py.File(path, "r", swmr=swmr) as f:
        for name in ["weir_format", "weir_version", "run", "segment", "start_time", "stop_time", "host", "arena",
                     "arena_geometry", "pipeline"]:
            check(name in f.attrs, f"root has no {name} attribute")
        check(text(f.attrs["weir_format"]) == "weir-recording 2.0", "weir_format")
        start_ns = int(f.attrs["start_ns"])
        for name in ["run", "segment", "start_time", "stop_time", "arena", "weir_version"]:
            print(f"root {name} {text(f.attrs[name]) or '-'}")
        print(f"root pipeline_bytes {len(text(f.attrs['pipeline']).encode())}")
        entry = f["entry"]
        check(text(entry.attrs.get("NX_class", "")) == "NXentry", "entry: NX_class is not NXentry")
        for name, g in entry.items():
            if name == "keys":
                keys(g)
            elif name in ("clock", "title", "definition", "start_time", "end_time", "instrument") or \
                    text(g.attrs.get("NX_class", "")) == "NXevent_data" or "log_channel" in g.attrs:
                continue  # clock provenance (1.1), the NeXus entry fields (1.6, 2.0), an event channel's
                          # NXevent_data and a PV log channel's NXlogs: check_recording.py, check_nexus_meta.py,
                          # check_events.py and record_pv_log_test.cpp read them
            else:
                channel(name, g, export, start_ns)


if __name__ == "__main__":
    main()
