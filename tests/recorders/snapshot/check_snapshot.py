#!/usr/bin/python3
"""Checks a weir snapshot file the way an h5py user reads it (docs/design/snapshots.md).

Exits 0 and prints one JSON line of what it saw, or exits 1 naming the first thing that is wrong.
"""
import argparse
import json
import sys

import h5py
import numpy as np

MASK = (1 << 64) - 1
SEED = 0xCBF29CE484222325  # as tests/common/payload.hpp
PRIME = 0x100000001B3


def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def payload_ok(value):
    if len(value) < 16 or len(value) % 8:
        return False
    words = [int(w) for w in np.frombuffer(value, dtype="<u8")]
    counter, total = words[0], SEED
    for i, w in enumerate(words[:-1]):
        if i and w != mix64(counter + i):
            return False
        total = ((total ^ w) * PRIME) & MASK
    return words[-1] == total


def fail(why):
    print("check_snapshot: " + why)
    sys.exit(1)


def check(args):
    f = h5py.File(args.path, "r")
    seen = {}
    if f.attrs["weir_format"] != "weir-snapshot 1":
        fail("weir_format is %r" % f.attrs["weir_format"])
    for group in ("arena", "keys", "labels", "groups", "vectors", "channels", "consumers"):
        if group not in f:
            fail("no /" + group)

    keys = f["keys"][:]
    status = h5py.check_enum_dtype(f["keys"].dtype["status"])
    kinds = h5py.check_enum_dtype(f["keys"].dtype["type"])
    seen["keys"] = len(keys)
    by_key = {row["key"].decode(): row for row in keys}
    payloads = busy = 0
    for row in keys:
        name = row["key"].decode()
        if not args.payload_prefix or not name.startswith(args.payload_prefix):
            continue
        if row["status"] == status["busy"]:  # a writer held it throughout: recorded so, without a value
            if len(row["value"]) or not row["owner_pid"]:
                fail("busy key %s has a value or no owner" % name)
            busy += 1
            continue
        if row["status"] != status["ok"] or row["type"] != kinds["bytes"] or not payload_ok(bytes(row["value"])):
            fail("key %s holds a value that was never written (torn copy)" % name)
        payloads += 1
    seen["payload_keys"], seen["busy_payload_keys"] = payloads, busy
    if payloads + busy < args.min_payload_keys:
        fail("%d intact and %d busy payload keys, expected at least %d" % (payloads, busy, args.min_payload_keys))
    if len(keys) < args.min_keys:
        fail("%d keys, expected at least %d" % (len(keys), args.min_keys))
    if args.busy_key:
        row = by_key.get(args.busy_key)
        if row is None or row["status"] != status["busy"] or row["owner_pid"] != args.busy_pid or len(row["value"]):
            fail("key %s is not recorded as busy by pid %d" % (args.busy_key, args.busy_pid))
    if args.torn_key:
        row = by_key.get(args.torn_key)
        if row is None or row["status"] != status["torn"] or len(row["value"]):
            fail("key %s is not recorded as torn without a value" % args.torn_key)

    vectors = f["vectors"]
    if args.min_vectors:
        info = vectors["info"][:]
        data = vectors["data"][:]
        vstatus = h5py.check_enum_dtype(vectors["info"].dtype["status"])
        ok = [i for i in range(len(info)) if info[i]["status"] == vstatus["ok"]]
        for i in ok:
            if not np.all(data[i] == data[i][0]):
                fail("vector %s mixes two writes" % vectors["keys"][i].decode())
        if data.shape != (len(info), vectors.attrs["dim"]) or len(vectors["keys"]) != len(info):
            fail("vector tables disagree: %s, %d keys, %d rows" % (data.shape, len(vectors["keys"]), len(info)))
        seen["vectors"] = len(ok)
        if len(ok) < args.min_vectors:
            fail("%d vectors, expected at least %d" % (len(ok), args.min_vectors))

    seen["consumers"] = len(f["consumers"])
    if seen["consumers"] < args.min_consumers:
        fail("%d consumers, expected at least %d" % (seen["consumers"], args.min_consumers))

    if args.channel:
        c = f["channels"][args.channel]
        seq = c["block_sequence"][:]
        offsets = c["block_offset"][:]
        samples = c["block_samples"][:]
        data = c["data"][:]
        skipped = set(int(s) for s in c["skipped"]["sequence"])
        first, end = int(c.attrs["window_first"]), int(c.attrs["window_end"])
        seen["blocks"] = len(seq)
        seen["first"] = int(seq[0]) if len(seq) else None
        seen["skipped"] = len(skipped)
        if len(seq) and np.any(np.diff(seq.astype(np.int64)) <= 0):
            fail("block sequences do not increase: %s" % seq)
        if set(int(s) for s in seq) | skipped != set(range(first, end)) or skipped & set(int(s) for s in seq):
            fail("blocks and skipped blocks do not cover the window %d..%d" % (first, end))
        if args.max_blocks is not None and len(seq) > args.max_blocks:
            fail("%d blocks, at most %d expected" % (len(seq), args.max_blocks))
        if args.expect_blocks is not None and len(seq) != args.expect_blocks:
            fail("%d blocks, %d expected" % (len(seq), args.expect_blocks))
        if args.expect_first is not None and (not len(seq) or seq[0] != args.expect_first):
            fail("first block %s, %d expected" % (seen["first"], args.expect_first))
        if len(seq) < args.min_blocks:
            fail("%d blocks, at least %d expected" % (len(seq), args.min_blocks))
        if args.u32_pattern:
            for s, o, n in zip(seq, offsets, samples):
                want = (np.uint64(s) * np.uint64(65536) + np.arange(n, dtype=np.uint64)) & np.uint64(0xFFFFFFFF)
                if not np.array_equal(data[o:o + n].astype(np.uint64), want):
                    fail("block %d does not hold its samples" % s)
    print(json.dumps(seen))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("path")
    p.add_argument("--payload-prefix", default="")
    p.add_argument("--min-payload-keys", type=int, default=0)
    p.add_argument("--min-keys", type=int, default=0)
    p.add_argument("--busy-key", default="")
    p.add_argument("--busy-pid", type=int, default=0)
    p.add_argument("--torn-key", default="")
    p.add_argument("--min-vectors", type=int, default=0)
    p.add_argument("--min-consumers", type=int, default=0)
    p.add_argument("--channel", default="")
    p.add_argument("--u32-pattern", action="store_true")
    p.add_argument("--max-blocks", type=int)
    p.add_argument("--expect-blocks", type=int)
    p.add_argument("--expect-first", type=int)
    p.add_argument("--min-blocks", type=int, default=0)
    check(p.parse_args())


if __name__ == "__main__":
    main()
