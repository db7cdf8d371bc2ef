"""What bench/epics_serve_bench.py and bench/tango_serve_bench.py share: the key writer they run (weir's
Python binding setting N keys to the wall-clock time of the write, HZ times a second on absolute
deadlines, one line per tick "WRITER <time> <ticks>"), a process's CPU time, the server part's pid, and
percentiles."""
import os
import re

TICK = os.sysconf("SC_CLK_TCK")

KEY_WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import weir
arena = weir.Arena(sys.argv[2])
keys, hz, seconds = [f"bench.k{i:04d}" for i in range(int(sys.argv[3]))], float(sys.argv[4]), float(sys.argv[5])
period, start = 1.0 / hz, time.monotonic()
ticks = 0
while True:
    deadline = start + ticks * period
    now = time.monotonic()
    if now - start >= seconds:
        break
    if deadline > now:
        time.sleep(deadline - now)
    for k in keys:
        arena.set(k, time.time())
    ticks += 1
    print(f"WRITER {time.time()} {ticks}", flush=True)
"""


def writer_ticks(output):
    """[(time_s, ticks)] from KEY_WRITER's output."""
    return [(float(t), int(n)) for t, n in re.findall(r"WRITER ([\d.]+) (\d+)", output or "")]


def cpu_s(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def child_of(parent, argv0_suffix):
    """The pid of `parent`'s child whose argv[0] ends with argv0_suffix, or None."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if ppid == parent and argv and argv[0].endswith(argv0_suffix.encode()):
            return int(entry.name)
    return None


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]
