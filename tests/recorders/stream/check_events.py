#!/usr/bin/python3
"""Checks an event channel's NXevent_data against its NXdata's block tables and the values
record_events_test.cpp wrote (block s: s % 5 events; event e: time offset 1000 (e + 1) + s % 7 ns,
height s + e / 8, id e % 3, flags 1 for e == 2), and that the NXdata's time axis is each event's
own time. Prints "ok events pulses P events E lost_pulses L <reasons>" or "error ..." lines.

Usage: check_events.py FILE CHANNEL
"""
import sys

import h5py
import numpy as np

errors = []


def check(ok, what):
    if not ok:
        errors.append(what)


def main():
    path, channel = sys.argv[1], sys.argv[2]
    with h5py.File(path, "r") as f:
        g = f["entry"][channel]
        ev = f["entry"][channel + "_events"]
        check(ev.attrs.get("NX_class") == "NXevent_data", "NX_class of the events group")
        seq = g["block_sequence"][...].astype(np.int64)
        stamps = g["block_realtime_ns"][...].astype(np.int64)
        counts = seq % 5
        zero, index = ev["event_time_zero"][...], ev["event_index"][...]
        check(np.array_equal(zero.astype(np.int64), stamps), "event_time_zero is not each block's stamp")
        check(ev["event_time_zero"].attrs.get("units") == "ns" and
              ev["event_time_zero"].attrs.get("offset") == "1970-01-01T00:00:00Z", "event_time_zero units/offset")
        check(np.array_equal(index.astype(np.int64), np.concatenate([[0], np.cumsum(counts)[:-1]])),
              "event_index is not the running count")
        s = np.repeat(seq, counts)
        e = np.arange(int(counts.sum())) - np.repeat(np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        offset, ids = ev["event_time_offset"][...], ev["event_id"][...]
        height, flags = ev["pulse_height"][...], ev["event_flags"][...]
        check(len(offset) == len(s) == len(ids) == len(height) == len(flags), "per-event lengths differ")
        check(np.array_equal(offset.astype(np.int64), 1000 * (e + 1) + s % 7), "event_time_offset")
        check(np.array_equal(ids, e % 3), "event_id")
        check(np.array_equal(height, s + e / 8.0), "pulse_height")
        check(np.array_equal(flags, (e == 2).astype(np.uint32)), "event_flags")
        check(ev["pulse_height"].attrs.get("units") == "V", "pulse_height units")
        # The NXdata: a row per event, its time the event's own (block stamp + offset since time@start).
        origin = np.datetime64(str(g["time"].attrs["start"]).rstrip("Z"), "ns").astype(np.int64)
        t = g["time"][...]
        want = (np.repeat(stamps, counts) + 1000 * (e + 1) + s % 7 - origin) / 1e9
        check(len(t) == len(want) and np.allclose(t, want, rtol=0, atol=1e-9), "NXdata time is not each event's time")
        gaps = g["gaps"][...]
        names = str(g["gaps"].attrs["reason_names"]).split(",")
        lost = int(gaps["blocks"].sum()) if len(gaps) else 0
        reasons = ",".join(sorted({names[int(r)] for r in gaps["reason"]})) if len(gaps) else "-"
        print(f"ok events pulses {len(zero)} events {len(offset)} lost_pulses {lost} {reasons}")
    for err in errors:
        print("error " + err)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
