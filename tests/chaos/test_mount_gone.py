"""The output mount goes away under the recorder (a lazy unmount, as when a disk is pulled or an
automount expires): the path `out` now names a directory on the root filesystem. The recorder must
notice (its directory is gone or on another st_dev) and stop with exit 4, and with
`require_mount = true` no restart may record onto the root filesystem instead."""
import os
import re
import subprocess
import time

from chaos import rng_for, tmpfs, wait_for
from ledger_check import runs_in
from test_disk import CRASH, files_outside, recorder_exit, recorder_exits


def test_lazy_unmount_of_the_output_stops_the_recorder_and_nothing_lands_on_root(workdir, staged, pipeline):
    rng = rng_for("lazy_unmount")
    disk = staged(tmpfs(workdir / "disk", 64))
    p = pipeline(out=disk / "out", shard=False, rotate_s=1, record_extra=", require_mount = true")
    run = p.run()
    run.wait_parts(p.kinds)
    wait_for(lambda: p.out.exists() and runs_in(p.out, p.arena), 20, f"the first file:\n{run.output()[-2000:]}")
    time.sleep(rng.uniform(0.3, 1.5))
    before = files_outside(workdir, disk)
    root_dev = os.stat(workdir).st_dev
    r = subprocess.run(["umount", "-l", str(disk)], capture_output=True, text=True)
    assert r.returncode == 0, f"umount -l {disk}: {r.stderr}"
    recorder_exit(run, 4)
    time.sleep(1.5)  # the supervisor restarts it meanwhile: each restart must refuse the root filesystem
    rc = run.stop()
    log = run.output()
    print(log[-4000:])
    assert not CRASH.search(log), f"a part crashed:\n{log[-4000:]}"
    exits = recorder_exits(log)
    assert exits and all(e == "exit 4" for e in exits), f"every recorder ends with exit 4 (disk fault), not {exits}"
    landed = sorted(f for f in files_outside(workdir, workdir / "none") - before
                    if not f.endswith(".log") and os.stat(f).st_dev == root_dev)
    assert not landed, f"files written onto the root filesystem after the output mount went away: {landed}"
    assert rc != 0, f"weir run exits {rc} though its essential recorder could not record"
    assert re.search(r"require|root file ?system|not a mount", log), \
        f"no recorder says why it refuses the root filesystem:\n{log[-3000:]}"
