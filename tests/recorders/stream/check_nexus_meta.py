#!/usr/bin/python3
"""Prints what a recording's NeXus metadata (format 2.0 fields from the pipeline) says, one fact a
line, for the test that wrote the pipeline to compare: check_nexus_meta.py FILE

  entry title=... definition=... default=...
  source name=... type=... probe=...                 (when /entry/instrument/source exists)
  detector CH part=... driver=... role=...           (when the NXdetector names its part)
  setting CH NAME=VALUE                              (each of its settings)
  calibration CH scale=... offset=... units=... scale_units=... offset_units=...
  data CH scale=... offset=... units=...             (the calibration attributes of data)
Exits 1 when a field exists but breaks the format (the wrong NX_class, a calibration on one side only)."""
import sys

import h5py


def text(value):
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def field(group, name):
    return text(group[name][()]) if name in group else "-"


def main():
    ok = True
    with h5py.File(sys.argv[1], "r") as f:
        e = f["entry"]
        print("entry title=%s definition=%s default=%s" % (field(e, "title"), field(e, "definition"),
                                                          text(e.attrs.get("default", "-"))))
        instrument = e["instrument"]
        if "source" in instrument:
            s = instrument["source"]
            ok &= text(s.attrs["NX_class"]) == "NXsource"
            print("source name=%s type=%s probe=%s" % (field(s, "name"), field(s, "type"), field(s, "probe")))
        for name, d in instrument.items():
            if text(d.attrs.get("NX_class")) != "NXdetector":
                continue
            ch = text(d.attrs["channel"])
            if "part" in d:
                print("detector %s part=%s driver=%s role=%s" % (ch, field(d, "part"), field(d, "driver"), field(d, "role")))
                ok &= text(d["settings"].attrs["NX_class"]) == "NXcollection"
                for key, value in d["settings"].items():
                    print("setting %s %s=%s" % (ch, key, text(value[()])))
            data = e[name]["data"]
            has_field, has_attr = "calibration_scale" in d, "calibration_scale" in data.attrs
            if has_field != has_attr:
                print("error %s: calibration in the NXdetector %s, on data %s" % (ch, has_field, has_attr))
                ok = False
            if has_field:
                print("calibration %s scale=%r offset=%r units=%s scale_units=%s offset_units=%s" % (
                    ch, float(d["calibration_scale"][()]), float(d["calibration_offset"][()]), field(d, "calibrated_units"),
                    text(d["calibration_scale"].attrs["units"]), text(d["calibration_offset"].attrs["units"])))
                print("data %s scale=%r offset=%r units=%s" % (
                    ch, float(data.attrs["calibration_scale"]), float(data.attrs["calibration_offset"]),
                    text(data.attrs["calibrated_units"])))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
