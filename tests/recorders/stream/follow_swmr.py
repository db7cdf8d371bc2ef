#!/usr/bin/python3
"""Follows a growing weir recording as a SWMR reader: opens it with swmr=True while the recorder
writes, then refreshes the channel's data and block_sequence until both have grown past what the
first look saw, or the timeout passes. Prints "first N" and "grown M" (or "stuck M") lines.

Usage: follow_swmr.py FILE CHANNEL TIMEOUT_S
"""
import sys
import time

import h5py


def main():
    path, channel, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        g = f["entry"][channel]
        data, seq = g["data"], g["block_sequence"]
        first = seq.shape[0]
        print(f"first {first} {data.shape[0]}", flush=True)
        deadline = time.monotonic() + timeout
        refreshes = 0
        while time.monotonic() < deadline:
            data.refresh()
            seq.refresh()
            refreshes += 1
            if seq.shape[0] > first and data.shape[0] > 0:
                last = int(seq[seq.shape[0] - 1])
                print(f"grown {seq.shape[0]} {data.shape[0]} last_seq {last} refreshes {refreshes}")
                return 0
            time.sleep(0.05)
        print(f"stuck {seq.shape[0]} {data.shape[0]}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
