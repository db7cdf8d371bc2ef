#!/usr/bin/python3
"""Reads the file codec_h5_test.cpp writes, as users outside weir would.

read_codecs.py hdf5plugin FILE COUNT
    h5py with hdf5plugin: every dataset with a `codec` attribute (COUNT of them) has the filter
    pipeline of its codec and the values of expected_<type>; zstd ones only where a zstd plugin is
    installed (no Debian package has one).
read_codecs.py plugin-path FILE H5DUMP
    No hdf5plugin: h5py and h5dump read the LZ4 datasets through HDF5_PLUGIN_PATH (Debian's
    hdf5-filter-plugin); a reader with an empty plugin path must fail on them (the control).
"""
import os
import re
import subprocess
import sys
import tempfile

# The filters, in order, each codec's datasets must carry.
FILTERS = {
    "none": [], "deflate:1": [1], "deflate:6": [1], "shuffle+deflate:1": [2, 1], "lz4": [32004],
    "shuffle+lz4": [2, 32004], "zstd:1": [32015], "zstd:3": [32015], "shuffle+zstd:1": [2, 32015],
    "bitshuffle+lz4": [32008],
}
LZ4_DATASETS = ["lz4_i16", "shuffle_lz4_i16", "lz4_f32", "shuffle_lz4_f64", "pipeline_lz4_i16", "pipeline_shuffle_lz4_i16"]


def fail(text):
    print("FAIL: " + text)
    sys.exit(1)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# Where a reader outside weir gets each registered filter on Debian. No Debian package has an HDF5
# zstd (32015) plugin (python3-hdf5plugin 4.0.1-3 ships no plugins of its own), so zstd datasets are
# read only where some plugin provides it; everything else must be readable.
PACKAGES = {32004: "hdf5-filter-plugin", 32008: "bitshuffle"}
ZSTD = 32015


def with_hdf5plugin(path, count):
    import h5py
    import hdf5plugin  # noqa: F401  (registers the filters its build embeds)
    checked, unread = 0, []
    with h5py.File(path, "r") as f:
        for name, ds in f.items():
            if "codec" not in ds.attrs:
                continue
            codec = ds.attrs["codec"]
            codec = codec.decode() if isinstance(codec, bytes) else str(codec)
            plist = ds.id.get_create_plist()
            ids = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
            if ids != FILTERS[codec]:
                fail(f"{name} ({codec}): filters {ids}, expected {FILTERS[codec]}")
            missing = [i for i in ids if not h5py.h5z.filter_avail(i)]
            if missing == [ZSTD]:
                unread.append(name)
                continue
            if missing:
                fail(f"{name} ({codec}): filter {missing} not available to h5py "
                     f"(Debian package: {', '.join(PACKAGES.get(i, '?') for i in missing)})")
            expected = f["expected_" + name.rsplit("_", 1)[1]][()]
            if not same(ds[()], expected):
                fail(f"{name} ({codec}): values differ from the expected")
            checked += 1
    if checked + len(unread) != count:
        fail(f"found {checked + len(unread)} codec datasets, expected {count}")
    print(f"checked {checked} datasets")
    if unread:
        print(f"not read: {len(unread)} zstd datasets, no zstd (32015) plugin here: {', '.join(unread)}")


def h5dump_values(h5dump, path, name):
    run = subprocess.run([h5dump, "-y", "-w", "0", "-d", "/" + name, path], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        fail(f"h5dump {name} exited {run.returncode}: {run.stderr.strip()[-500:]}")
    text = run.stdout
    start = text.find("DATA {", text.find("DATASPACE"))
    if start < 0:
        fail(f"h5dump {name}: no DATA in its output: {text[:500]}")
    block = text[start + len("DATA {"):text.find("}", start)]
    return [int(v) for v in re.findall(r"-?\d+", block)]


def through_plugin_path(path, h5dump):
    if "hdf5plugin" in sys.modules:
        fail("hdf5plugin is loaded")
    plugin_dir = os.environ.get("HDF5_PLUGIN_PATH", "")
    if not os.path.exists(os.path.join(plugin_dir, "libh5lz4.so")):
        fail(f"no libh5lz4.so in HDF5_PLUGIN_PATH={plugin_dir!r} (Debian: hdf5-filter-plugin)")
    import h5py
    with h5py.File(path, "r") as f:
        for name in LZ4_DATASETS:
            expected = f["expected_" + name.rsplit("_", 1)[1]][()]
            if not same(f[name][()], expected):
                fail(f"{name}: values read through the plugin differ from the expected")
        expected_i16 = f["expected_i16"][()]
    print(f"h5py read {len(LZ4_DATASETS)} LZ4 datasets through {plugin_dir}")
    for name in ("lz4_i16", "shuffle_lz4_i16"):
        values = h5dump_values(h5dump, path, name)
        if values != expected_i16.tolist():
            fail(f"h5dump {name}: {len(values)} values, not the expected {len(expected_i16)}")
    print("h5dump printed the expected values of lz4_i16 and shuffle_lz4_i16")
    # The control: with no plugin to load, the same read fails, so the reads above went through it.
    with tempfile.TemporaryDirectory() as empty:
        env = dict(os.environ, HDF5_PLUGIN_PATH=empty)
        probe = f"import h5py; h5py.File({path!r}, 'r')['lz4_i16'][()]"
        run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
        if run.returncode == 0:
            fail("lz4_i16 was read with an empty plugin path: the plugin path was not what read it")
    print("without the plugin path the LZ4 dataset does not open (control)")


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    mode, path, arg = sys.argv[1:]
    if mode == "hdf5plugin":
        with_hdf5plugin(path, int(arg))
    elif mode == "plugin-path":
        through_plugin_path(path, arg)
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
