#!/usr/bin/python3
"""A hand-off command for the tests: copies FILE into DEST (under a temporary name, then a rename, so a
copy is whole or absent, and a second success for one file leaves one copy) and appends a line to
DEST/log. It fails (exit 1) while DEST/fail-<file name> exists, and sleeps DEST/slow seconds (when
that file exists) after writing DEST/started-<file name>, so a test can kill its recorder mid-hand-off.

Usage: handoff_cmd.py DEST FILE
"""
import os
import shutil
import sys
import time
from pathlib import Path


def log(dest, line):
    with open(dest / "log", "a") as f:
        f.write(line + "\n")


def main():
    dest, path = Path(sys.argv[1]), Path(sys.argv[2])
    if (dest / f"fail-{path.name}").exists():
        log(dest, f"fail {path.name}")
        return 1
    (dest / f"started-{path.name}").touch()
    slow = dest / "slow"
    if slow.exists():
        time.sleep(float(slow.read_text() or "0"))
    temp = dest / f".{path.name}.{os.getpid()}.tmp"
    shutil.copyfile(path, temp)
    os.replace(temp, dest / path.name)
    log(dest, f"ok {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
