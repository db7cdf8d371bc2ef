"""Reading what weir recorded of EPICS PVs with plain h5py: the NXlog of each PV (by its pv_name
attribute) and a channel's NXdata (by its channel attribute)."""
import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def pv_logs(files):
    """{pv name: {dataset: concatenated array, "attrs": group attrs, "value_attrs": value attrs}} over the files in order."""
    found = {}
    for path in files:
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                if not isinstance(obj, h5py.Group) or "pv_name" not in obj.attrs:
                    return
                pv = text(obj.attrs["pv_name"])
                entry = found.setdefault(pv, {"attrs": {k: obj.attrs[k] for k in obj.attrs},
                                              "value_attrs": {k: obj["value"].attrs[k] for k in obj["value"].attrs}
                                              if "value" in obj else {}})
                for ds in obj:
                    if isinstance(obj[ds], h5py.Dataset):
                        data = obj[ds][...]
                        entry[ds] = np.concatenate([entry[ds], data]) if ds in entry else data
            f.visititems(visit)
    return found


def channel_frames(files, channel):
    """(rows of data, block_sequence, block_flags, realtime_ns, gap rows) of a channel over the files in order."""
    rows, seqs, flags, times, gaps = [], [], [], [], []
    for path in files:
        with h5py.File(path, "r") as f:
            for _, g in f["entry"].items():
                if isinstance(g, h5py.Group) and text(g.attrs.get("channel", "")) == channel:
                    n = len(g["block_sequence"])
                    seqs.append(g["block_sequence"][:n])
                    flags.append(g["block_flags"][:n])
                    times.append(g["block_realtime_ns"][:n])
                    rows.append(g["data"][...])
                    gaps.extend([tuple(r) for r in g["gaps"][...]])
                    names = [s.strip() for s in text(g["gaps"].attrs["reason_names"]).split(",")]
    if not seqs:
        return None
    return (np.concatenate(rows), np.concatenate(seqs), np.concatenate(flags), np.concatenate(times), gaps, names)
