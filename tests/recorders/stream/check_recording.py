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
"""
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
    start_ns = int(f.attrs["start_ns"])
    for name, g in f["entry"].items():
        if g.attrs.get("NX_class") != "NXdata":
            continue
        chan = g.attrs["channel"]
        axes_attr = g.attrs.get("axes")
        check(axes_attr is not None and list(np.atleast_1d(axes_attr)) == ["time"], f"{chan}: axes is {axes_attr!r}")
        check(int(g.attrs.get("time_indices", -1)) == 0, f"{chan}: time_indices is not 0")
        time = g["time"]
        for attr, value in [("units", "s"), ("start", f.attrs["start_time"])]:
            check(time.attrs.get(attr) == value, f"{chan}: time@{attr} is {time.attrs.get(attr)!r}, not {value!r}")
        check(bool(time.attrs.get("long_name")), f"{chan}: time has no long_name")
        check(bool(g["data"].attrs.get("long_name")), f"{chan}: data has no long_name")
        t = time[...]
        check(t.shape == (2,) and t.dtype == np.float64, f"{chan}: time is {t.dtype} {t.shape}, not f64 (start, step)")
        rate = float(g["data"].attrs["sample_rate_hz"])
        check(abs(t[1] - 1.0 / rate) <= 1e-12 / rate, f"{chan}: time step {t[1]} is not 1 / {rate}")
        realtime = g["block_realtime_ns"][...]
        offsets = g["block_offset"][...]
        n = min(len(realtime), len(offsets))
        if n == 0:
            check(np.isnan(t[0]), f"{chan}: time starts at {t[0]} without a block")
            continue
        first = (int(realtime[0]) - start_ns) / 1e9
        check(abs(t[0] - first) < 1e-9, f"{chan}: time starts at {t[0]} s, the first block at {first} s")
        # Without gaps the axis is every block's stamp: start + offset * step against the block table.
        stamps = (realtime[:n].astype(np.int64) - start_ns) / 1e9
        nominal = t[0] + offsets[:n].astype(np.float64) * t[1]
        drift = float(np.max(np.abs(stamps - nominal)))
        if args:
            check(drift <= float(args[0]), f"{chan}: a block's stamp is {drift} s off the time axis")
        print(f"ok axes {chan} start {t[0]!r} step {t[1]!r} blocks {n} max_drift_s {drift!r}")


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


def main():
    check_name, path, *args = sys.argv[1:]
    with h5py.File(path, "r") as f:
        {"strings": strings, "axes": axes, "clock": clock, "sample_clock": sample_clock}[check_name](f, args)
    for e in errors:
        print(f"error {e}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
