#!/usr/bin/python3
"""The NeXus conformance walk: every example pipeline that records (examples/pipelines/*.lua) runs
under `weir run` for a few seconds, and every group of every file it writes is walked against the
NeXus base-class rules below, with h5py and numpy; silx's NXdata validity is asked of every NXdata.

Usage: nexus_walk_test.py WEIR EXAMPLES_DIR FAKE_SCPI [FILE.h5 ...]
  With files after the three paths, only those files are walked (nothing runs).

Rules (a failure names the file, the group and the rule):
  nx_class         every group but the root has NX_class, and it is a NeXus base class
  default          the root's @default names an NXentry; an NXentry's @default names an NXdata in it
  entry_fields     an NXentry has start_time, end_time, title and definition
  signal           an NXdata's @signal names a dataset of the group
  axes             each @axes entry is "." or names a dataset of the group
  axis_indices     each AXIS_indices names a dimension of the signal whose length is the axis's length
                   (or the axis's length - 1: bin edges)
  two_value_axis   an axis of two values (start, step) against a longer dimension: silx reads it as a
                   linear calibration, no other NeXus reader does (format 1.x wrote them; 2.0 writes a
                   true per-row time axis): see TRUE_TIME_AXES_REQUIRED
  units            every numeric dataset of an NXdata, NXlog or NXdetector has @units
  key_units        the same, of an NXlog's `value`: a key's units come from its text key <key>_units,
                   which the parts that publish keys do not all write yet: see KEY_UNITS_REQUIRED
  log_fields       an NXlog has time and value, of equal length
  event_fields     an NXevent_data has event_time_zero, event_index, event_time_offset and event_id
  silx_nxdata      silx.io.nxdata.is_valid_nxdata is true of every NXdata (a one-row 2-D signal silx
                   takes for a bad scatter: expected until SILX_ONE_ROW_REQUIRED is on)
Prints one summary line per file; exits 1 on any failure.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import silx.io.nxdata

# The switch for the format 2.0 time axes. False (format 1.x): a two-value (start, step) axis is
# reported as an expected failure and does not fail the walk. True (format 2.0, a true per-row time
# axis on every channel): it fails the walk like any other rule.
TRUE_TIME_AXES_REQUIRED = True
# The switch for key units. False: an NXlog `value` without @units (its key has no <key>_units text
# key: the mca's counters and times, the stats shards' moments, the drivers' accounting counters) is
# reported as an expected failure. Flip it once every part that publishes numeric keys gives their units.
KEY_UNITS_REQUIRED = False
# The switch for a one-row 2-D signal. silx 1.1 reads an axis as long as the whole signal as a
# scatter axis, ignoring @AXIS_indices: data (1, N) of a file that holds one block (a slow channel's
# file cut short by a rotation) with its N-value second axis is refused, though its axes and
# indices are right. False: reported as an expected failure (silx_one_row). Flip it once the writer
# (or silx) avoids it.
SILX_ONE_ROW_REQUIRED = False

RUN_SECONDS = 3
RUN_TIMEOUT_S = 90

# NeXus base classes (NeXus 2024.02, base_classes/): an NX_class outside this list is not NeXus.
NX_BASE_CLASSES = {
    "NXaperture", "NXattenuator", "NXbeam", "NXbeam_stop", "NXbending_magnet", "NXcapillary", "NXcite",
    "NXcollection", "NXcollimator", "NXcrystal", "NXcylindrical_geometry", "NXdata", "NXdetector",
    "NXdetector_channel", "NXdetector_group", "NXdetector_module", "NXdisk_chopper", "NXentry", "NXenvironment",
    "NXevent_data", "NXfermi_chopper", "NXfilter", "NXflipper", "NXfresnel_zone_plate", "NXgeometry", "NXgrating",
    "NXguide", "NXinsertion_device", "NXinstrument", "NXlog", "NXmirror", "NXmoderator", "NXmonitor",
    "NXmonochromator", "NXnote", "NXobject", "NXoff_geometry", "NXorientation", "NXparameters", "NXpdb",
    "NXpinhole", "NXpolarizer", "NXpositioner", "NXprocess", "NXreflections", "NXroot", "NXsample",
    "NXsample_component", "NXsensor", "NXshape", "NXslit", "NXsource", "NXsubentry", "NXtransformations",
    "NXtranslation", "NXuser", "NXvelocity_selector", "NXxraylens",
}
UNITS_CLASSES = {"NXdata", "NXlog", "NXdetector"}
ENTRY_FIELDS = ("start_time", "end_time", "title", "definition")
EVENT_FIELDS = ("event_time_zero", "event_index", "event_time_offset", "event_id")


def text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


def text_list(value):
    if isinstance(value, (bytes, str)):
        return [text(value)]
    return [text(v) for v in np.atleast_1d(value)]


def numeric(dataset):
    return dataset.dtype.kind in "iufc" and dataset.dtype.names is None


class Walk:
    def __init__(self, name):
        self.name = name
        self.failures = []  # (group, rule, message)
        self.expected = []  # rules whose switch is off: two_value_axis, key_units
        self.groups = 0
        self.nxdata = 0

    def fail(self, group, rule, message):
        self.failures.append((group, rule, message))

    def check(self, condition, group, rule, message):
        if not condition:
            self.fail(group, rule, message)

    def walk(self, f):
        self.check_default(f)
        f.visititems(self.visit)

    def check_default(self, f):
        entry = text(f.attrs.get("default", ""))
        if not entry or entry not in f or text(f[entry].attrs.get("NX_class", "")) != "NXentry":
            self.fail("/", "default", "root @default %r names no NXentry" % entry)
            return
        plot = text(f[entry].attrs.get("default", ""))
        target = f[entry].get(plot) if plot else None
        self.check(isinstance(target, h5py.Group) and text(target.attrs.get("NX_class", "")) == "NXdata",
                   "/" + entry, "default", "@default %r names no NXdata of the entry" % plot)

    def visit(self, path, obj):
        if not isinstance(obj, h5py.Group):
            return
        self.groups += 1
        where = "/" + path
        nx_class = text(obj.attrs.get("NX_class", ""))
        if not nx_class:
            self.fail(where, "nx_class", "no NX_class")
            return
        self.check(nx_class in NX_BASE_CLASSES, where, "nx_class", "NX_class %r is no NeXus base class" % nx_class)
        if nx_class in UNITS_CLASSES:
            for name, item in obj.items():
                if isinstance(item, h5py.Dataset) and numeric(item) and "units" not in item.attrs:
                    if nx_class == "NXlog" and name == "value" and not KEY_UNITS_REQUIRED:
                        self.expected.append((where, "key_units", "the key's value has no @units"))
                    else:
                        self.fail(where, "units", "numeric field %r has no @units" % name)
        if nx_class == "NXentry":
            for field in ENTRY_FIELDS:
                self.check(isinstance(obj.get(field), h5py.Dataset), where, "entry_fields", "no " + field)
        elif nx_class == "NXdata":
            self.nxdata += 1
            self.check_nxdata(where, obj)
        elif nx_class == "NXlog":
            time_, value = obj.get("time"), obj.get("value")
            if not isinstance(time_, h5py.Dataset) or not isinstance(value, h5py.Dataset):
                self.fail(where, "log_fields", "no time or no value")
            else:
                self.check(len(time_) == len(value), where, "log_fields",
                           "time has %d rows, value %d" % (len(time_), len(value)))
        elif nx_class == "NXevent_data":
            for field in EVENT_FIELDS:
                self.check(isinstance(obj.get(field), h5py.Dataset), where, "event_fields", "no " + field)

    def check_nxdata(self, where, g):
        signal_name = text(g.attrs.get("signal", ""))
        signal_data = g.get(signal_name) if signal_name else None
        if not isinstance(signal_data, h5py.Dataset):
            self.fail(where, "signal", "@signal %r names no dataset" % signal_name)
            signal_data = None
        axes = text_list(g.attrs["axes"]) if "axes" in g.attrs else []
        for axis in axes:
            self.check(axis == "." or isinstance(g.get(axis), h5py.Dataset), where, "axes",
                       "@axes entry %r names no dataset" % axis)
        for attr in g.attrs:
            if not attr.endswith("_indices"):
                continue
            axis = attr[: -len("_indices")]
            axis_data = g.get(axis)
            if not isinstance(axis_data, h5py.Dataset) or signal_data is None:
                self.fail(where, "axis_indices", "%s: no dataset %r" % (attr, axis))
                continue
            dims = [int(i) for i in np.atleast_1d(g.attrs[attr])]
            if len(dims) != axis_data.ndim or any(d < 0 or d >= signal_data.ndim for d in dims):
                self.fail(where, "axis_indices", "%s = %s: not %d dimension(s) of the signal's %d" %
                          (attr, dims, axis_data.ndim, signal_data.ndim))
                continue
            for k, d in enumerate(dims):
                have, want = axis_data.shape[k], signal_data.shape[d]
                if have in (want, want + 1):
                    continue
                if have == 2 and axis_data.ndim == 1:
                    message = "%s is (start, step), two values against dimension %d of %d" % (axis, d, want)
                    (self.failures if TRUE_TIME_AXES_REQUIRED else self.expected).append(
                        (where, "two_value_axis", message))
                else:
                    self.fail(where, "axis_indices", "%s has %d values, dimension %d of %r has %d" %
                              (axis, have, d, signal_name, want))
        if not silx.io.nxdata.is_valid_nxdata(g):
            shapes = ", ".join("%s %s" % (k, g[k].shape) for k in [signal_name] + axes if isinstance(g.get(k), h5py.Dataset))
            issues = silx.io.nxdata.NXdata(g, validate=True).issues
            one_row = (signal_data is not None and signal_data.ndim == 2 and signal_data.shape[0] == 1 and issues and
                       all("but this does not seem to be a scatter" in i for i in issues))
            if one_row and not SILX_ONE_ROW_REQUIRED:
                self.expected.append((where, "silx_one_row", "silx: %s (%s)" % ("; ".join(issues), shapes)))
            else:
                self.fail(where, "silx_nxdata", "silx: not a valid NXdata: %s (%s)" % ("; ".join(issues), shapes))

    def summary(self):
        rules = sorted({rule for _, rule, _ in self.expected})
        return "%s: %d groups, %d NXdata, %d failures, %d expected failures%s" % (
            self.name, self.groups, self.nxdata, len(self.failures), len(self.expected),
            " (" + ", ".join(rules) + ": switch off)" if rules else "")


def walk_files(files):
    bad = 0
    for name in files:
        w = Walk(name)
        with h5py.File(name, "r") as f:
            w.walk(f)
        print(w.summary())
        for group, rule, message in w.failures:
            print("FAIL %s %s [%s]: %s" % (name, group, rule, message))
        for rule in sorted({rule for _, rule, _ in w.expected}):
            print("  %s (switch off): %s" % (rule, ", ".join(g for g, r, _ in w.expected if r == rule)))
        bad += len(w.failures)
    return bad


def self_test(scratch):
    """The walk finds each rule broken in a file made to break it (so that a pass means something)."""
    name = os.path.join(scratch, "broken.h5")
    with h5py.File(name, "w") as f:
        f.attrs["default"] = "entry"
        e = f.create_group("entry")
        e.attrs["NX_class"] = "NXentry"
        e.attrs["default"] = "nothing"
        e.create_dataset("title", data="t")  # no start_time, end_time, definition
        f.create_group("entry/plain")  # no NX_class
        f.create_group("entry/odd").attrs["NX_class"] = "NXodd"
        d = e.create_group("d")
        d.attrs.update({"NX_class": "NXdata", "signal": "data", "axes": ["time", "missing"], "time_indices": 0,
                        "column_indices": 1})
        d.create_dataset("data", data=np.zeros((5, 4)))  # no units
        d.create_dataset("time", data=[0.0, 0.1]).attrs["units"] = "s"  # (start, step)
        d.create_dataset("column", data=np.arange(7.0)).attrs["units"] = "s"  # 7 against 4
        n = e.create_group("nosignal")
        n.attrs.update({"NX_class": "NXdata", "signal": "absent"})
        log = e.create_group("log")
        log.attrs["NX_class"] = "NXlog"
        log.create_dataset("time", data=np.arange(3.0)).attrs["units"] = "s"
        log.create_dataset("value", data=np.arange(2.0))
        e.create_group("events").attrs["NX_class"] = "NXevent_data"
        one = e.create_group("one")  # a single row: right by NeXus, refused by silx
        one.attrs.update({"NX_class": "NXdata", "signal": "data", "axes": ["time", "column"], "time_indices": 0,
                          "column_indices": 1})
        for field, value in (("data", np.zeros((1, 4))), ("time", [0.0]), ("column", np.arange(4.0))):
            one.create_dataset(field, data=value).attrs["units"] = "s"
    w = Walk(name)
    with h5py.File(name, "r") as f:
        w.walk(f)
    found = {(group, rule) for group, rule, _ in w.failures}
    want = {("/entry", "default"), ("/entry", "entry_fields"), ("/entry/plain", "nx_class"),
            ("/entry/odd", "nx_class"), ("/entry/d", "units"), ("/entry/d", "axes"),
            ("/entry/d", "axis_indices"), ("/entry/nosignal", "signal"), ("/entry/nosignal", "silx_nxdata"),
            ("/entry/log", "log_fields"), ("/entry/events", "event_fields")}
    if TRUE_TIME_AXES_REQUIRED:
        want.add(("/entry/d", "two_value_axis"))
    if not SILX_ONE_ROW_REQUIRED:
        if ("/entry/one", "silx_one_row") not in {(g, r) for g, r, _ in w.expected}:
            raise SystemExit("self test: the one-row NXdata is not an expected failure: %s" % w.expected)
    else:
        want.add(("/entry/one", "silx_nxdata"))
    missed = want - found
    if not SILX_ONE_ROW_REQUIRED and any(g == "/entry/one" for g, _ in found):
        raise SystemExit("self test: the one-row NXdata failed: %s" % sorted(found))
    if missed:
        raise SystemExit("self test: the walk missed %s in %s (found %s)" % (sorted(missed), name, sorted(found)))
    print("self test: the walk finds all %d broken rules" % len(want))


def replace(textual, old, new):
    if old not in textual:
        raise SystemExit("the example lacks %r" % old)
    return textual.replace(old, new)


def weir_get(weir, arena, key):
    r = subprocess.run([weir, "get", arena, key], capture_output=True, text=True, timeout=20)
    return r.stdout.strip() if r.returncode == 0 else ""


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit("timed out after %d s waiting for %s" % (seconds, what))


def prepare(example, text_, scratch, arena):
    """The example with its arena renamed and every recorder's out under scratch."""
    name = re.search(r'arena \{ name = "([^"]+)"', text_).group(1)
    text_ = replace(text_, 'arena { name = "%s"' % name, 'arena { name = "%s"' % arena)
    return re.sub(r'out = "([^"]*)"', lambda m: 'out = "%s/%s"' % (scratch, m.group(1) or "out/"), text_)


class Skipped(Exception):
    """An example this build cannot run (said loudly, not counted as walked)."""


def free_port():
    import socket
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as r:
                u.bind(("127.0.0.1", port))
                r.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        return port
    raise SystemExit("no free port")


def epics_stand_in(weir, example, scratch, text_, helpers, env):
    """The EPICS beamline example: its stand-in softIoc on ports of its own, weir's PVs on others, and
    a run started and stopped with weir runctl once the driver has its PVs (the arena's runs are
    controlled). Returns the pipeline text and a function to call once weir run is up."""
    base_dir = os.environ.get("EPICS_BASE", "")
    softioc = os.path.join(base_dir, "bin", "linux-x86_64", "softIoc")
    if not base_dir or not os.access(softioc, os.X_OK) or not os.access(os.path.join(os.path.dirname(weir), "weir-epics"), os.X_OK):
        raise Skipped("no EPICS base or weir-epics in this build")
    port, served = free_port(), free_port()
    env.update({"EPICS_CA_SERVER_PORT": str(port), "EPICS_CA_REPEATER_PORT": str(port + 1), "EPICS_CA_ADDR_LIST": "127.0.0.1",
                "EPICS_CA_AUTO_ADDR_LIST": "NO", "EPICS_CAS_INTF_ADDR_LIST": "127.0.0.1",
                "PATH": os.path.dirname(softioc) + os.pathsep + os.environ.get("PATH", "")})
    helpers.append(subprocess.Popen([os.path.join(os.path.dirname(softioc), "caRepeater")], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    helpers.append(subprocess.Popen([softioc, "-S", "-d", example[: -len(".lua")] + ".db"], env=env, start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    text_ = replace(text_, 'epics "serve" { prefix = "BL1:WEIR:",',
                    'epics "serve" { prefix = "NXW%d:", server_port = %d, pva = false,' % (os.getpid(), served))
    arena = re.search(r'arena \{ name = "([^"]+)"', text_).group(1)

    def one_run():
        wait_for(lambda: weir_get(weir, arena, "bl.pvs_connected") == "7", 60, "the EPICS driver's 7 PVs")
        subprocess.run([weir, "runctl", "start", arena, "--title", "NeXus walk"], check=True, capture_output=True, timeout=60)
        time.sleep(RUN_SECONDS)
        subprocess.run([weir, "runctl", "stop", arena], check=True, capture_output=True, timeout=120)
    return text_, one_run


def run_example(weir, example, scratch, fake_scpi):
    """Runs one example for RUN_SECONDS (with its stand-in devices) and returns its files."""
    base = os.path.basename(example)[: -len(".lua")]
    arena = "nxwalk%s%d" % (base.replace("_", "")[:10], os.getpid())
    text_ = prepare(example, open(example).read(), scratch, arena)
    helpers = []
    env = dict(os.environ)
    during = None
    try:
        if base == "beamline_epics":
            text_, during = epics_stand_in(weir, example, scratch, text_, helpers, env)
        if base == "lab_instruments":
            for kind, port in (("dmm", "5025"), ("psu", "5026")):
                port_file = os.path.join(scratch, kind + ".port")
                helpers.append(subprocess.Popen([sys.executable, fake_scpi, "--kind", kind, "--port-file", port_file]))
                real = wait_for(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 20, kind + " port")
                text_ = replace(text_, "port = " + port, "port = " + real)
        if base == "udp_digitizer":
            text_ = replace(text_, "port = 5000", "port = 0")
        pipeline = os.path.join(scratch, base + ".lua")
        with open(pipeline, "w") as out:
            out.write(text_)
        seconds = 60 if base in ("udp_digitizer", "beamline_epics") else RUN_SECONDS
        run = subprocess.Popen([weir, "run", pipeline, "--duration", str(seconds), "--status-every", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        if during is not None:
            during()
            run.send_signal(signal.SIGINT)
        if base == "udp_digitizer":
            port = wait_for(lambda: weir_get(weir, arena, "digitizer.port") not in ("", "0") and
                            weir_get(weir, arena, "digitizer.port"), 30, "digitizer.port")
            subprocess.run([weir, "udpgen", "--port", port, "--rate", "1e7", "--samples", "4096", "--seconds", "0.3"],
                           capture_output=True, timeout=30, check=True)
            time.sleep(1)
            run.send_signal(signal.SIGINT)
        output, _ = run.communicate(timeout=RUN_TIMEOUT_S)
        if run.returncode != 0:
            raise SystemExit("%s: weir run exited %d:\n%s" % (base, run.returncode, output))
    finally:
        for h in helpers:
            h.terminate()
            try:
                h.wait(timeout=10)
            except subprocess.TimeoutExpired:  # softIoc's shell outlives SIGTERM
                h.kill()
                h.wait(timeout=10)
    return sorted(glob.glob(os.path.join(scratch, "**", "*.h5"), recursive=True))


def main():
    weir, examples, fake_scpi = sys.argv[1:4]
    scratch = tempfile.mkdtemp(prefix="weir-nxwalk-")
    try:
        self_test(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if len(sys.argv) > 4:
        sys.exit(1 if walk_files(sys.argv[4:]) else 0)
    bad, walked = 0, 0
    for example in sorted(glob.glob(os.path.join(examples, "pipelines", "*.lua"))):
        source = open(example).read()
        if "arena {" not in source or not re.search(r'^record "', source, re.M):
            continue  # a script, or a pipeline that records nothing
        scratch = tempfile.mkdtemp(prefix="weir-nxwalk-")
        try:
            # A script the pipeline names (thermometer.lua) lives beside it.
            for other in glob.glob(os.path.join(examples, "pipelines", "*.lua")):
                if other != example:
                    shutil.copy(other, scratch)
            try:
                files = run_example(weir, example, scratch, fake_scpi)
            except Skipped as why:
                print("SKIPPED %s: %s" % (example, why))
                continue
            if not files:
                print("FAIL %s: no HDF5 file written" % example)
                bad += 1
                continue
            walked += len(files)
            bad += walk_files(files)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print("%d files walked, %d failures" % (walked, bad))
    sys.exit(1 if bad or not walked else 0)


if __name__ == "__main__":
    main()
