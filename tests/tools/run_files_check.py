"""Reads a controlled run's files and the run log as a physicist would (h5py, pandas) and prints one
JSON object: the run's NeXus fields, its keys at start, and the run log's rows.

    run_files_check.py DIR ARENA RUN
"""
import glob
import json
import sys

import h5py
import pandas


def text(node):
    value = node[()]
    return value.decode() if isinstance(value, bytes) else str(value)


def main():
    directory, arena, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
    files = sorted(glob.glob(f"{directory}/{arena}_run{run:06d}_*.h5"))
    out = {"files": len(files), "entries": []}
    for name in files:
        with h5py.File(name, "r") as f:
            e = f["entry"]
            out["entries"].append({
                "title": text(e["title"]),
                "entry_identifier": text(e["entry_identifier"]),
                "user": text(e["user/name"]),
                "user_class": e["user"].attrs["NX_class"].decode() if isinstance(e["user"].attrs["NX_class"], bytes)
                else str(e["user"].attrs["NX_class"]),
                "sample": text(e["sample/name"]),
                "sample_class": str(e["sample"].attrs["NX_class"], "utf-8")
                if isinstance(e["sample"].attrs["NX_class"], bytes) else str(e["sample"].attrs["NX_class"]),
                "notes": text(e["notes/data"]),
                "start_time": text(e["start_time"]),
                "end_time": text(e["end_time"]),
                "run_start_time": text(e["run_control/start_time"]),
                "pipeline_at_start": text(e["run_control/pipeline_at_start"]),
                "keys_at_start": dict(zip([n.decode() for n in e["run_control/keys_at_start/name"][:]],
                                          [v.decode() for v in e["run_control/keys_at_start/value"][:]])),
            })
    log = pandas.read_csv(f"{directory}/{arena}_runs.csv", parse_dates=["start", "stop"], keep_default_na=False)
    out["log"] = {
        "columns": list(log.columns),
        "runs": [int(r) for r in log["run"]],
        "ended": list(log["ended"]),
        "titles": list(log["title"]),
        "seconds": [float((s - b).total_seconds()) for b, s in zip(log["start"], log["stop"])],
        "exact": [bool(x) for x in log["exact"]],
        "lost": [int(x) for x in log["blocks_lost"]],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
