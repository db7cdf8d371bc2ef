#!/usr/bin/python3
"""Checks what format 1.1 of docs/design/recording.md adds to a recording, with h5py, computing each
expected value independently from the file's own tables. Prints "ok" lines, and one "error TEXT"
line per violation (exit status 1 then).

Usage: check_recording.py CHECK FILE [ARGS]
  strings FILE [KEY TEXT_FILE]  every string attribute and string dataset is variable-length UTF-8;
                                the text key KEY's last value is TEXT_FILE's contents, whole
  axes FILE [MAX_DRIFT_S]       every channel's NXdata has a time axis that starts at its first block's
                                stamp; with MAX_DRIFT_S, every block's stamp is within that of the axis
  clock FILE [CHANNEL SEQ JUMP_NS]  /entry/clock's provenance and offsets; the channels' clock_steps
                                are empty, or CHANNEL's is the one row (SEQ, JUMP_NS)
  entry FILE TITLE              the NeXus entry fields (1.6): title is TITLE; start_time and end_time
                                ISO 8601 UTC, the first and last block's block_realtime_ns; one NXdetector
                                per channel in the NXinstrument, its fields those of the channel's data
"""
import datetime
import re
import sys

import h5py
import numpy as np

errors = []


def check(condition, message):
    if not condition:
        errors.append(message)


def vlen_utf8(tid):
    return tid.get_class() == h5py.h5t.STRING and tid.is_variable_str() and tid.get_cset() == h5py.h5t.CSET_UTF8


def strings(f, args):
    seen = {"attrs": 0, "datasets": 0}

    def attrs_of(name, obj):
        for attr in obj.attrs:
            aid = h5py.h5a.open(obj.id, attr.encode())
            tid = aid.get_type()
            if tid.get_class() == h5py.h5t.STRING:
                seen["attrs"] += 1
                check(vlen_utf8(tid), f"/{name} attribute {attr} is not a variable-length UTF-8 string")

    def visit(name, obj):
        attrs_of(name, obj)
        if isinstance(obj, h5py.Dataset) and obj.id.get_type().get_class() == h5py.h5t.STRING:
            seen["datasets"] += 1
            check(vlen_utf8(obj.id.get_type()), f"/{name} is not a variable-length UTF-8 string dataset")

    attrs_of("", f)
    f.visititems(visit)
    print(f"ok strings attrs {seen['attrs']} datasets {seen['datasets']}")
    check(isinstance(f.attrs["stop_time"], str) and f.attrs["stop_time"].endswith("Z"), "stop_time is not set text")
    if args:
        key, text_file = args
        with open(text_file, "rb") as t:
            expected = t.read()
        log = f["entry/keys"][key.replace("%", "%25").replace("/", "%2F")]
        values = log["value"][...]
        check(len(values) > 0, f"key {key}: no rows")
        if len(values):
            last = values[-1]
            last = last if isinstance(last, bytes) else str(last).encode()
            check(last == expected, f"key {key}: last value is {len(last)} bytes, not the {len(expected)} written")
            print(f"ok key {key} bytes {len(last)}")


def axes(f, args):
    """Format 2.0: every channel's NXdata has axes (time, <column axis>) of data's lengths, and
    time[row] + <column axis>[col] is each sample's true time: its block's stamp + its place."""
    start_ns = int(f.attrs["start_ns"])
    for name, g in f["entry"].items():
        if g.attrs.get("NX_class") != "NXdata" or "channel" not in g.attrs:
            continue
        chan = g.attrs["channel"]
        d = g["data"]
        axes_attr = [str(a) for a in np.atleast_1d(g.attrs.get("axes", []))]
        check(len(axes_attr) == 2 and axes_attr[0] == "time", f"{chan}: axes is {axes_attr!r}")
        check(int(g.attrs.get("time_indices", -1)) == 0, f"{chan}: time_indices is not 0")
        column_axis = axes_attr[1] if len(axes_attr) == 2 else ""
        check(int(g.attrs.get(column_axis + "_indices", -1)) == 1, f"{chan}: {column_axis}_indices is not 1")
        time = g["time"]
        check(time.attrs.get("units") == "s", f"{chan}: time@units is {time.attrs.get('units')!r}")
        # The origin: the segment's start, or the channel's first block's stamp when earlier (--from-oldest).
        origin = str(time.attrs.get("start", ""))
        origin_ns = int(np.datetime64(origin.rstrip("Z"), "ns").astype(np.int64)) if origin else -1
        check(origin_ns <= start_ns, f"{chan}: time@start {origin} is after the segment's start_time")
        check(bool(time.attrs.get("long_name")), f"{chan}: time has no long_name")
        check(bool(d.attrs.get("long_name")), f"{chan}: data has no long_name")
        t = time[...]
        check(d.ndim == 2 and t.dtype == np.float64 and t.shape == (d.shape[0],),
              f"{chan}: time is {t.dtype} {t.shape}, data {d.shape}: not one f64 per row")
        rate = float(d.attrs["sample_rate_hz"])
        framed = "frame_elements" in d.attrs
        if not framed:
            check(column_axis == "time_in_block", f"{chan}: the column axis is {column_axis!r}")
            within = g[column_axis][...]
            check(within.shape == (d.shape[1],) and np.allclose(within, np.arange(d.shape[1]) / rate, rtol=0, atol=1e-15),
                  f"{chan}: time_in_block is not column / rate")
            check(g[column_axis].attrs.get("units") == "s", f"{chan}: time_in_block has no units s")
        realtime = g["block_realtime_ns"][...].astype(np.int64)
        offsets = g["block_offset"][...].astype(np.int64)
        samples = g["block_samples"][...].astype(np.int64)
        n = min(len(realtime), len(offsets), len(samples))
        if n == 0:
            check(len(t) == 0, f"{chan}: {len(t)} time values without a block")
            continue
        cols = d.shape[1]
        # Each recorded sample: its row and column, its time from the axes and from the tables.
        total = int(samples[:n].sum())
        place = np.repeat(offsets[:n] - np.concatenate([[0], np.cumsum(samples[:n])[:-1]]), samples[:n]) + np.arange(total)
        row, col = place // cols, place % cols
        in_block = place - np.repeat(offsets[:n], samples[:n])
        true_s = np.repeat((realtime[:n] - origin_ns) / 1e9, samples[:n]) + in_block / rate
        check(origin_ns == start_ns or origin_ns == int(realtime[0]), f"{chan}: time@start is neither start nor first block")
        check(float(t[:len(t)].min()) >= 0, f"{chan}: a time before the axis's origin: {float(t.min())} s")
        from_axes = t[row] + (col / rate if framed else g[column_axis][...][col])
        if framed and column_axis == "event":  # an event channel: a row is an event at its own time
            from_axes = t[row]
            true_s = np.repeat((realtime[:n] - origin_ns) / 1e9, samples[:n]) + d[...].reshape(-1)[place - col] / 1e9
        error = float(np.max(np.abs(from_axes - true_s))) if total else 0.0
        check(error <= 1.0 / rate, f"{chan}: a sample's time from the axes is {error} s off its block's stamp")
        if args:
            check(error <= float(args[0]), f"{chan}: a sample's time is {error} s off (allowed {args[0]})")
        print(f"ok axes {chan} rows {len(t)} blocks {n} samples {total} max_error_s {error!r} min_time_s {float(t.min())!r} "
              f"origin_before_start_s {(start_ns - origin_ns) / 1e9!r}")


def clock(f, args):
    c = f["entry/clock"]
    check(c.attrs.get("NX_class") == "NXcollection", "clock: NX_class is not NXcollection")
    for name in ["sample_clock", "sync_source", "adjtimex_flags"]:
        check(isinstance(c.attrs.get(name), str), f"clock: {name} is not text")
    check(c.attrs["sync_source"] != "", "clock: empty sync_source (unknown says so)")
    for name in ["synchronised", "adjtimex_state", "adjtimex_status", "est_error_us", "max_error_us"]:
        check(name in c.attrs and np.issubdtype(np.asarray(c.attrs[name]).dtype, np.integer), f"clock: {name}")
    state = int(c.attrs["adjtimex_state"])
    check(-1 <= state <= 5, f"clock: adjtimex_state {state}")
    if int(c.attrs["synchronised"]):
        check(state != 5 and int(c.attrs["adjtimex_status"]) & 0x40 == 0, "clock: synchronised with STA_UNSYNC")
    rows = c["offsets"][...]
    check(list(rows.dtype.names) == ["realtime_ns", "monotonic_ns", "offset_ns", "event"], "clock: offsets fields")
    check(len(rows) >= 1 and rows["event"][0] == 0, "clock: no offsets row at open")
    start_ns, stop_ns = int(f.attrs["start_ns"]), int(f.attrs["stop_ns"])
    if stop_ns:
        check(len(rows) >= 2 and rows["event"][-1] == 1, "clock: a closed file has no offsets row at close")
    for r in rows:
        check(int(r["offset_ns"]) == int(r["realtime_ns"]) - int(r["monotonic_ns"]), "clock: offset is not the difference")
        check(int(r["realtime_ns"]) >= start_ns - 10**9 and (not stop_ns or int(r["realtime_ns"]) <= stop_ns + 10**9),
              "clock: an offsets row outside the segment's time")
    print(f"ok clock source {c.attrs['sync_source']!r} synchronised {int(c.attrs['synchronised'])} "
          f"flags {c.attrs['adjtimex_flags']!r} est_error_us {int(c.attrs['est_error_us'])} offsets {len(rows)} "
          f"drift_ns {int(rows['offset_ns'][-1]) - int(rows['offset_ns'][0])}")
    want = {args[0]: (int(args[1]), int(args[2]))} if args else {}
    for name, g in f["entry"].items():
        if g.attrs.get("NX_class") != "NXdata":
            continue
        chan = g.attrs["channel"]
        steps = g["clock_steps"][...]
        check(list(steps.dtype.names) == ["sequence", "jump_ns", "realtime_ns", "monotonic_ns"], f"{chan}: steps fields")
        got = [(int(s["sequence"]), int(s["jump_ns"])) for s in steps]
        check(got == ([want[chan]] if chan in want else []), f"{chan}: clock_steps {got}")
        # Independently: the block stamps themselves step back exactly there.
        seq, realtime = g["block_sequence"][...], g["block_realtime_ns"][...].astype(np.int64)
        back = [(int(seq[i]), int(realtime[i] - realtime[i - 1])) for i in range(1, len(seq)) if realtime[i] < realtime[i - 1]]
        check(back == got, f"{chan}: the block stamps step back at {back}, clock_steps says {got}")
        print(f"ok steps {chan} {got}")


def sample_clock(f, args):
    """Each channel's data attribute clock (1.3) against bit 0 of its block_flags."""
    for name, g in f["entry"].items():
        if g.attrs.get("NX_class") != "NXdata" or "block_flags" not in g:
            continue
        chan = g.attrs["channel"]
        said = g["data"].attrs.get("clock")
        check(isinstance(said, str), f"{chan}: clock is not text")
        source = set(int(x) & 1 for x in g["block_flags"][...])
        want = {frozenset(): "", frozenset({1}): "source", frozenset({0}): "host"}.get(frozenset(source), "mixed")
        check(said == want, f"{chan}: clock {said!r}, the block flags say {want!r}")
        print(f"ok sample_clock {chan} {said}")


def iso8601_ns(value):
    """ns since the epoch of "YYYY-MM-DDTHH:MM:SS.fffffffffZ" (datetime alone keeps only microseconds)."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", value)
    if m is None:
        return None
    whole = datetime.datetime.strptime(m.group(1) + "+0000", "%Y-%m-%dT%H:%M:%S%z")
    return int(whole.timestamp()) * 1_000_000_000 + int((m.group(2) or "0").ljust(9, "0"))


def text_value(dataset):
    value = dataset[()]
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def entry(f, args):
    """The NeXus entry fields (1.6) against the file's own tables and data attributes."""
    e = f["entry"]
    check(text_value(e["title"]) == args[0], f"title {text_value(e['title'])!r}, not {args[0]!r}")
    firsts, lasts, channels = [], [], []
    for name, g in e.items():
        if not isinstance(g, h5py.Group) or g.attrs.get("NX_class") != "NXdata" or "block_realtime_ns" not in g:
            continue
        channels.append((name, g))
        stamps = g["block_realtime_ns"][...]
        if len(stamps):
            firsts.append(int(stamps[0]))
            lasts.append(int(stamps[-1]))
    times = {}
    for field in ("start_time", "end_time"):
        said = text_value(e[field])
        times[field] = iso8601_ns(said)
        check(times[field] is not None, f"{field} {said!r} is not ISO 8601 UTC")
    if firsts:
        check(times["start_time"] == min(firsts), f"start_time {times['start_time']} is not the first block's {min(firsts)}")
        check(times["end_time"] == max(lasts), f"end_time {times['end_time']} is not the last block's {max(lasts)}")
    for attr in ("start_time", "stop_time", "start_ns", "stop_ns", "run", "segment", "arena"):
        check(attr in f.attrs, f"root attribute {attr} is gone")
    inst = e["instrument"]
    check(inst.attrs.get("NX_class") == "NXinstrument", "instrument: NX_class is not NXinstrument")
    check(len(inst) == len(channels), f"instrument holds {len(inst)} groups for {len(channels)} channels")
    for name, g in channels:
        chan = g.attrs["channel"]
        check(name in inst, f"{chan}: no detector in the instrument")
        if name not in inst:
            continue
        d, data = inst[name], g["data"]
        check(d.attrs.get("NX_class") == "NXdetector", f"{chan}: NX_class of its detector is not NXdetector")
        check(d.attrs.get("channel") == chan, f"{chan}: its detector's channel attribute")
        rate = d["sample_rate"]
        check(rate.dtype == np.float64 and float(rate[()]) == float(data.attrs["sample_rate_hz"]),
              f"{chan}: sample_rate {rate[()]!r}")
        check(rate.attrs.get("units") == "Hz", f"{chan}: sample_rate units {rate.attrs.get('units')!r}")
        check(text_value(d["units"]) == data.attrs["units"], f"{chan}: units {text_value(d['units'])!r}")
        check(text_value(d["dtype"]) == data.attrs["dtype"], f"{chan}: dtype {text_value(d['dtype'])!r}")
        spb = d["samples_per_block"]
        check(spb.dtype == np.uint32 and int(spb[()]) == int(data.attrs["samples_per_block"]),
              f"{chan}: samples_per_block {spb[()]!r}")
        print(f"ok detector {chan} {float(rate[()])!r} {text_value(d['units'])} {text_value(d['dtype'])} {int(spb[()])}")
    print(f"ok entry {text_value(e['start_time'])} {text_value(e['end_time'])} blocks {len(firsts)}")


def main():
    check_name, path, *args = sys.argv[1:]
    with h5py.File(path, "r") as f:
        {"strings": strings, "axes": axes, "clock": clock, "sample_clock": sample_clock, "entry": entry}[check_name](f, args)
    for e in errors:
        print(f"error {e}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
