"""The chaos suite's harness: pipelines run by the real `weir run` in scratch directories, their
parts found among the supervisor's children and killed, mounts the tests make and always undo, and
the ledger checks every scenario ends with (`weir audit --json`, an independent count of the
files' tables with h5py, and every file opened by plain h5py)."""
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
import zlib
from pathlib import Path

BUILD = Path(os.environ.get("WEIR_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
WEIR = os.environ.get("WEIR_CLI", str(BUILD / "tools" / "weir"))
BASE_SEED = int(os.environ.get("WEIR_CHAOS_SEED", str(int(time.time()) % 1_000_000)))
PART_KINDS = {"sim": "driver", "shard": "shard", "record": "recorder"}
_serial = iter(range(1_000_000))


def rng_for(test_name):
    """A random generator seeded from the suite's seed and the test's name; says how to repeat it."""
    seed = BASE_SEED ^ zlib.crc32(test_name.encode())
    print(f"{test_name}: seed {seed} (WEIR_CHAOS_SEED={BASE_SEED} repeats the suite)", flush=True)
    return random.Random(seed)


def weir(*args, timeout=60):
    """Runs the built `weir`; returns the CompletedProcess (text)."""
    return subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def wait_for(predicate, timeout, what, every=0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def runctl_start(arena):
    """`weir runctl start ARENA`: the number of the run it started."""
    r = weir("runctl", "start", arena)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def runctl_status(arena):
    return json.loads(weir("runctl", "status", arena, "--json").stdout)


def recording(arena, number):
    """Whether a live recorder of `arena` records run `number` and has its first block."""
    return any(r["alive"] and r["open_run"] == number and r["first_block_ns"] for r in runctl_status(arena)["recorders"])


def key_u64(arena, k):
    """Key `k` of `arena` as an integer; None when it is not there or not one."""
    r = weir("get", arena, k)
    return int(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip().isdigit() else None


def private_name(stem):
    return f"chaos{stem}{os.getpid()}x{next(_serial)}"


# --- processes -------------------------------------------------------------------------------------

def _stat(pid):
    """(state, ppid) of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def _argv(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return []


def alive(pid):
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def parts_of(supervisor_pid):
    """The live part processes a supervisor started, by kind ("driver", "shard", "recorder")."""
    found = {kind: [] for kind in PART_KINDS.values()}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        st = _stat(int(entry.name))
        if st is None or st[1] != supervisor_pid or st[0] in ("Z", "X"):
            continue
        argv = _argv(int(entry.name))
        if len(argv) >= 2 and argv[0] == b"weir" and argv[1].decode() in PART_KINDS:
            found[PART_KINDS[argv[1].decode()]].append(int(entry.name))
    return found


class Supervised:
    """One `weir run PIPELINE` in its own session, its output in a log file beside the pipeline."""

    def __init__(self, pipeline, *extra, log=None):
        self.pipeline = Path(pipeline)
        self.log_path = Path(log or self.pipeline.with_suffix(f".run{next(_serial)}.log"))
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([WEIR, "run", str(self.pipeline), "--status-every", "0", *extra],
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self.seen = set()  # every part pid seen, for the clean-up
        self.rc = None

    def output(self):
        return self.log_path.read_text(errors="replace")

    def parts(self):
        found = parts_of(self.proc.pid)
        for pids in found.values():
            self.seen.update(pids)
        return found

    def wait_parts(self, kinds, timeout=30):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"weir run exited ({self.proc.returncode}) before its parts ran:\n{self.output()}")
            found = self.parts()
            return all(found[k] for k in kinds) and found
        return wait_for(ready, timeout, f"parts {kinds} of weir run {self.pipeline.name}")

    def kill_part(self, kind, timeout=30):
        """SIGKILLs the part of this kind; returns once the supervisor has started its replacement."""
        victim = self.wait_parts([kind], timeout)[kind][0]
        os.kill(victim, signal.SIGKILL)
        self.wait_parts([kind], timeout)

        def replaced():
            pids = self.parts()[kind]
            return pids and victim not in pids
        wait_for(replaced, timeout, f"a new {kind} after killing pid {victim}:\n{self.output()[-3000:]}")
        return victim

    def stop(self, timeout=60):
        """SIGINT (a clean stop); returns weir run's exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"weir run did not stop within {timeout} s of SIGINT:\n{self.output()[-3000:]}")
        return self.rc

    def close(self):
        """Kills whatever is left of this run (its supervisor and the parts it started)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        for pid in self.seen:
            if alive(pid) and _argv(pid)[:1] == [b"weir"]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def writer_counts(run_output):
    """{channel: (blocks written, dropped at source)} from weir run's summary (the writer's own count)."""
    found = {}
    for m in re.finditer(r"channel (\S+)\s+written (\d+) blocks \(\d+ samples\), dropped at source (\d+)", run_output):
        found[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return found


def arena_counts(arena):
    """{channel: (blocks written, dropped at source)} as the arena (live or stale) says."""
    r = weir("ls", arena, "--json")
    assert r.returncode == 0, f"weir ls {arena} --json failed ({r.returncode}): {r.stderr}"
    doc = json.loads(r.stdout)
    channels = doc["channels"] if isinstance(doc, dict) else doc
    return {c["name"]: (int(c["blocks_written"]), int(c.get("dropped_at_source", 0))) for c in channels}


def remove_arena(arena):
    weir("rm", arena, "--force")


# --- mounts -----------------------------------------------------------------------------------------

def _tool(name):
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None)


def umount(path):
    """Unmounts `path`, retrying while something still holds it, lazily as a last resort."""
    for _ in range(50):
        r = subprocess.run(["umount", str(path)], capture_output=True, text=True)
        if r.returncode == 0 or not os.path.ismount(path):
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


class MountRefused(Exception):
    """This machine does not let the suite mount what a scenario needs; the reason says why."""


@contextlib.contextmanager
def _mounted(mount_args, path, what):
    """`mount MOUNT_ARGS PATH` for the block; MountRefused naming `what` when it cannot be mounted."""
    r = subprocess.run(["mount", *mount_args, str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise MountRefused(f"cannot mount {what} at {path}: {r.stderr.strip() or r.returncode}")
    try:
        yield path
    finally:
        umount(path)


def tmpfs(path, size_mb):
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return _mounted(["-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs"], path, f"a {size_mb} MiB tmpfs")


def _make_image(image, size_mb, mkfs, packages, tools=()):
    """A sparse `size_mb` image made into a filesystem by `mkfs` (its argv, the image appended), on a
    machine that has loop devices; MountRefused naming what is missing otherwise."""
    for tool in (mkfs[0], "losetup", *tools):
        if _tool(tool) is None:
            raise MountRefused(f"{tool} is not installed (Debian: {packages}; scripts/deps.sh installs them)")
    if not Path("/dev/loop-control").exists():
        raise MountRefused("no /dev/loop-control: this machine has no loop devices")
    with open(image, "wb") as f:
        f.truncate(size_mb << 20)
    r = subprocess.run([_tool(mkfs[0]), *mkfs[1:], str(image)], capture_output=True, text=True)
    if r.returncode != 0:
        raise MountRefused(f"{mkfs[0]} {image} failed: {r.stderr.strip()}")


def _detach_loops(image):
    loops = subprocess.run([_tool("losetup"), "-j", str(image)], capture_output=True, text=True).stdout
    for line in loops.splitlines():
        subprocess.run([_tool("losetup"), "-d", line.split(":")[0]], capture_output=True)


@contextlib.contextmanager
def ext4(path, size_mb):
    """A loop-mounted ext4 of `size_mb` (a sparse image beside `path`, no reserved blocks) mounted at
    `path`: a real block filesystem of a logger's size, journal and all."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    image = path.with_name(path.name + ".img")
    _make_image(image, size_mb, ["mkfs.ext4", "-q", "-F", "-m", "0"], "e2fsprogs, util-linux")
    try:
        with _mounted(["-o", "loop", str(image)], path, f"the ext4 image {image}"):
            yield path
    finally:
        _detach_loops(image)
        image.unlink(missing_ok=True)


class Xfs:
    """A loop-mounted XFS image the test can shut down (EIO on every access) and mount again."""

    def __init__(self, image, mount):
        self.image, self.mount = Path(image), Path(mount)

    def mount_it(self):
        r = subprocess.run(["mount", "-o", "loop", str(self.image), str(self.mount)], capture_output=True, text=True)
        if r.returncode != 0:
            raise MountRefused(f"cannot loop-mount the XFS image {self.image} at {self.mount}: {r.stderr.strip()}")

    def shutdown(self):
        r = subprocess.run([_tool("xfs_io"), "-x", "-c", "shutdown", str(self.mount)], capture_output=True, text=True)
        assert r.returncode == 0, f"xfs_io -x -c shutdown {self.mount} failed: {r.stderr}"

    def remount(self):
        umount(self.mount)
        assert not os.path.ismount(self.mount), f"{self.mount} is still mounted after umount"
        self.mount_it()


@contextlib.contextmanager
def xfs(workdir, size_mb=320):
    """An XFS of `size_mb` (mkfs.xfs wants at least 300 MiB; the image is sparse) mounted at workdir/xfs."""
    fs = Xfs(Path(workdir) / "xfs.img", Path(workdir) / "xfs")
    fs.mount.mkdir()
    _make_image(fs.image, size_mb, ["mkfs.xfs", "-q", "-f"], "xfsprogs, util-linux", tools=("xfs_io",))
    fs.mount_it()
    try:
        yield fs
    finally:
        umount(fs.mount)
        _detach_loops(fs.image)
