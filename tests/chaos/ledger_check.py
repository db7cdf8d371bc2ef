"""What every chaos scenario ends with: the run's ledger as `weir audit --json` prints it (0
duplicated, 0 unaccounted, `written` equal to the writer's own count), the same ledger counted here
again from the files' tables with h5py (an independent reading of docs/design/recording.md), and
every file of the run opened by plain h5py, after `weir repair` only where the audit says the file
is still SWMR-marked."""
import json
import re
import subprocess
from pathlib import Path

import h5py
import numpy as np

from chaos import WEIR, weir

NO_ROW = np.uint64(2**64 - 1)      # a table row extended but never written (format: fill values)
SIDE_REASONS = ("dropped_at_source",)  # gap rows without sequence numbers: counted aside


def run_files(out, arena, run):
    """The run's HDF5 files in segment order (names: <arena>_run<RUN, 6 digits>_<SEGMENT>.h5, with
    ".partial" after it while written or when its recorder was killed)."""
    pattern = re.compile(re.escape(arena) + r"_run0*" + str(run) + r"_(\d+)\.h5(?:\.partial)?$")
    found = [(int(m.group(1)), p) for p in Path(out).iterdir() if (m := pattern.match(p.name))]
    return [p for _, p in sorted(found)]


def runs_in(out, arena):
    """The run numbers of `arena` found in `out` (files and run records)."""
    pattern = re.compile(re.escape(arena) + r"_run(\d+)(?:_\d+\.h5(?:\.partial)?|\.ledger\.json)$")
    return sorted({int(m.group(1)) for p in Path(out).iterdir() if (m := pattern.match(p.name))})


def audit(out, run=None):
    """`weir audit OUT --json [--run N]`: (exit status, channel objects, file objects, text)."""
    args = ["audit", str(out), "--json"] + (["--run", str(run)] if run is not None else [])
    r = weir(*args, timeout=120)
    channels, files = [], []
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        if "channel" in obj:
            channels.append(obj)
        elif "files" in obj:  # the run's line: {"run", "arena", "files": [{"path", "state", ...}], "exact"}
            files.extend(obj["files"])
    return r.returncode, channels, files, f"$ weir {' '.join(args)}\n(exit {r.returncode})\n{r.stdout}{r.stderr}"


def plain_open_error(path):
    try:
        with h5py.File(path, "r"):
            return None
    except Exception as e:  # h5py raises OSError for a SWMR-marked file; anything else is as bad
        return f"{type(e).__name__}: {e}"


GAP_FLAG = np.uint32(1 << 31)  # core::kBlockGapFlag: a row of a block published as a gap (no samples)
GAP_REASON_MASK = np.uint32(0xFF)  # core::kBlockGapReasonMask: such a row's reason, an index into reason_names


def count_tables(files):
    """Per channel, from the files alone: recorded sequences, those flagged as gap blocks, and gap
    rows {reason: [(sequence, blocks)]}; a flagged row counts there too, 1 block under the reason in
    its flags' low 8 bits (named by the file's reason_names; 0, a bare flag: source_loss). Only the rows every block table holds
    count (format)."""
    per = {}
    for path in files:
        with h5py.File(path, "r") as f:
            for group in f["entry"].values():
                if not isinstance(group, h5py.Group) or "block_sequence" not in group:
                    continue
                name = group.attrs.get("channel", group.name.rsplit("/", 1)[-1])
                name = name.decode() if isinstance(name, bytes) else str(name)
                ch = per.setdefault(name, {"sequences": [], "flagged": [], "gaps": {}, "flagged_gaps": {}})
                n = min(group[t].shape[0] for t in ("block_sequence", "block_offset", "block_samples",
                                                     "block_realtime_ns", "block_monotonic_ns", "block_flags"))
                seq, flags = group["block_sequence"][:n], group["block_flags"][:n]
                bad = np.nonzero(seq == NO_ROW)[0]
                if bad.size:
                    seq, flags = seq[: bad[0]], flags[: bad[0]]
                ch["sequences"].append(seq)
                flagged = (flags & GAP_FLAG) != 0
                ch["flagged"].append(seq[flagged])
                gaps = group["gaps"]
                names = gaps.attrs.get("reason_names", "")
                names = [n.strip() for n in (names.decode() if isinstance(names, bytes) else str(names)).split(",")]
                for s, reason in zip(seq[flagged], flags[flagged] & GAP_REASON_MASK):
                    # as the audit does (h5::flagged_row_reason): a bare flag (before format 1.5) is source_loss
                    name = names[int(reason)] if 0 < int(reason) < len(names) else "source_loss"
                    ch["flagged_gaps"].setdefault(name, []).append((int(s), 1))
                if gaps.shape[0]:
                    for row in gaps[:]:
                        if int(row["reason"]) >= len(names):
                            continue  # fill value: a row extended but never written
                        reason = names[int(row["reason"])]
                        ch["gaps"].setdefault(reason, []).append((int(row["sequence"]), int(row["blocks"])))
    return per


def independent_ledger(files):
    """{channel: dict(recorded, flagged, duplicated, holes, gaps)}: holes are sequences between the
    files' first and last evidence in no row and no gap row; duplicated ones are in more than one."""
    result = {}
    for name, ch in count_tables(files).items():
        seq = np.concatenate(ch["sequences"]).astype(np.int64)
        flagged = np.unique(np.concatenate(ch["flagged"]))
        intervals = [(s, s + b) for r, rows in ch["gaps"].items() if r not in SIDE_REASONS for s, b in rows if b > 0]
        lo = min(([int(seq.min())] if seq.size else []) + [s for s, _ in intervals], default=0)
        hi = max(([int(seq.max()) + 1] if seq.size else []) + [e for _, e in intervals], default=0)
        cover = np.zeros(max(hi - lo, 0), np.int64)
        if seq.size:
            np.add.at(cover, seq - lo, 1)
        for s, e in intervals:
            cover[s - lo:e - lo] += 1
        gaps = {r: sum(b for _, b in rows) for r, rows in ch["gaps"].items()}
        for r, rows in ch["flagged_gaps"].items():
            gaps[r] = gaps.get(r, 0) + len({s for s, _ in rows})
        result[name] = {"recorded": int(np.unique(seq).size) - int(flagged.size), "flagged": int(flagged.size),
                        "duplicated": int((cover > 1).sum()), "holes": int((cover == 0).sum()), "gaps": gaps}
    return result


def check_run(out, arena, run, expected=None, *, false_reasons=("before_start",)):
    """Checks one run of `arena` in `out`; returns the audit's channel objects. `expected`:
    {channel: (blocks written, dropped at source)}, the writer's own count, to compare `written` with.
    `false_reasons`: gap reasons that cannot be true here (under `weir run` the recorders register
    before any driver starts, so no block is before their start)."""
    files = run_files(out, arena, run)
    rc, channels, file_states, text = audit(out, run)
    assert rc in (0, 5), f"weir audit failed on run {run} in {out}:\n{text}"
    assert channels, f"weir audit printed no channel for run {run} in {out}:\n{text}"
    problems = []
    for c in channels:
        if c.get("duplicates", 0) != 0 or c.get("unaccounted", 0) != 0:
            problems.append(f"channel {c['channel']}: {c.get('duplicates')} duplicated, {c.get('unaccounted')} unaccounted")
        for reason in false_reasons:
            if c.get("gaps", {}).get(reason, 0):
                problems.append(f"channel {c['channel']}: {c['gaps'][reason]} block(s) under '{reason}', which cannot be true here")
    for name, (blocks, dropped) in (expected or {}).items():
        c = next((c for c in channels if c["channel"] == name), None)
        if c is None:
            problems.append(f"channel {name}: written by the source ({blocks} blocks) but not in the audit")
        elif c.get("written") != blocks + dropped:
            problems.append(f"channel {name}: audit says written {c.get('written')}, the writer counted "
                            f"{blocks} published + {dropped} dropped at source")
    if len(file_states) != len(files):
        problems.append(f"the audit lists {len(file_states)} file(s), the directory holds {len(files)} of run {run}")
    state = {Path(f.get("path", "")).name: f for f in file_states}
    marked = {name for name, f in state.items() if f.get("state") == "swmr-marked"}
    for path in files:
        err = plain_open_error(path)
        if err is None:
            continue
        if path.name in marked:
            r = subprocess.run([WEIR, "repair", str(path)], capture_output=True, text=True, timeout=60)
            err = plain_open_error(path)
            if err is None:
                continue
            problems.append(f"{path.name}: still refused by plain h5py after weir repair ({r.returncode}: {r.stderr.strip()}): {err}")
        elif state.get(path.name, {}).get("state") == "unreadable":
            problems.append(f"{path.name}: unreadable (audit: {state[path.name].get('error')}; h5py: {err})")
        else:
            problems.append(f"{path.name}: plain h5py refuses it and the audit does not call it swmr-marked: {err}")
    if rc != 0 and not problems:
        problems.append("weir audit exits non-zero though every channel balances and every file opens")
    if not problems:
        mine = independent_ledger(files)
        for c in channels:
            m = mine.get(c["channel"], {"recorded": 0, "flagged": 0, "duplicated": 0, "holes": 0})
            if m["duplicated"] or m["holes"]:
                problems.append(f"channel {c['channel']}: the files' own tables hold {m['duplicated']} sequence(s) twice "
                                f"and leave {m['holes']} in no row between their first and last block")
            if c.get("recorded") not in (m["recorded"], m["recorded"] + m["flagged"]):
                problems.append(f"channel {c['channel']}: audit says recorded {c.get('recorded')}, the tables hold "
                                f"{m['recorded']} (and {m['flagged']} flagged as lost at the source)")
    assert not problems, f"run {run} in {out}:\n  " + "\n  ".join(problems) + f"\n{text}"
    return channels
