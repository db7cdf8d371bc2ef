"""`alert` declarations evaluated by `weir run`, delivered to an HTTP listener this test serves on
127.0.0.1 (a free port) and to a command that writes its argv to a file.

A sim driver SIGSTOPped past stall_s makes one firing body naming its channel, SIGCONT one resolved
body; a second incident makes a second pair; an alert with every_s repeats while it fires, spaced
by every_s; a listener answering 500 to the first POST gets it retried, counted (weir.alert.NAME.failed)
and still exactly one firing body; a key the test writes (<part>.handoff_failures) fires
handoff_failing. A SIGKILLed recorder fires part_restarting, a SIGKILLed shard with restarts = 0
part_given_up, a floor above the disk disk_below; a SIGSTOPped lossy shard consumer_lagging and,
lapped, blocks_lost; a SIGSTOPped driver rate_below. A healthy run posts nothing. Every wait has a
deadline and says what it saw."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

WEIR = os.environ.get("WEIR_CLI", str(Path(__file__).resolve().parents[3] / "build" / "tools" / "weir"))
DEADLINE_S = 40  # generous: a busy 2-core machine
EVERY_S = 3      # the repeating alert's every_s


class Listener:
    """A webhook receiver: keeps (arrival, path, body) of each POST; answers 500 to the first POST on /retry."""

    def __init__(self):
        self.posts = []
        self.lock = threading.Lock()
        self.refused = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.lock:
                    if self.path == "/retry" and outer.refused == 0:
                        outer.refused += 1
                        code = 500
                    else:
                        outer.posts.append((time.monotonic(), self.path, json.loads(body)))
                        code = 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def bodies(self, name):
        with self.lock:
            return [(t, b) for t, _, b in self.posts if b["name"] == name]

    def wait_for(self, name, count, what, timeout=DEADLINE_S):
        """Waits until alert `name` has `count` bodies; fails naming every body that came."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.bodies(name)
            if len(got) >= count:
                return got
            time.sleep(0.05)
        with self.lock:
            seen = [(p, b["name"], b["state"], b["subject"]) for _, p, b in self.posts]
        raise AssertionError(f"timed out after {timeout} s waiting for {what} ({count} bodies of alert {name}); "
                             f"{len(seen)} POST(s) came: {seen}")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def weir_text(*args):
    r = subprocess.run([WEIR, *args], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr


def children(pid):
    """The pids of `pid`'s children, with their command lines."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if ppid == pid:
            out.append((int(entry.name), cmdline))
    return out


def sent_at(body):
    """A notice's `at` (ISO 8601 UTC, ms) in seconds since the epoch."""
    return datetime.strptime(body["at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def part_pid(proc, word):
    """Waits for the one part process of `weir run` proc whose command is `weir WORD ...`; its pid."""
    def found():
        kids = [pid for pid, cmd in children(proc.pid) if cmd.startswith(f"weir {word} ")]
        return len(kids) == 1, kids
    return wait_until(found, f"the {word} part's process")[0]


def passes_after(arena, n):
    """Waits until the evaluator has made more than `n` passes (weir.alerts.passes); returns the count."""
    def done():
        rc, out = weir_text("get", arena, "weir.alerts.passes")
        return rc == 0 and out.strip().isdigit() and int(out) > n, out
    return int(wait_until(done, f"more than {n} evaluation pass(es) of the alerts (weir.alerts.passes)"))


def wait_until(predicate, what, timeout=DEADLINE_S):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        ok, last = predicate()
        if ok:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last seen: {last}")


@pytest.fixture
def work(tmp_path):
    if not os.access(WEIR, os.X_OK):
        pytest.fail(f"no weir binary at {WEIR} (set WEIR_CLI)")
    listener = Listener()
    procs = []
    yield tmp_path, listener, procs
    for proc, arena, log in procs:
        if proc.poll() is None:
            for pid, _ in children(proc.pid):
                os.kill(pid, signal.SIGCONT)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        log.seek(0)
        print(log.read())
        subprocess.run([WEIR, "rm", arena], capture_output=True)
    listener.close()


def start(tmp_path, procs, name, text, *extra):
    arena = f"{name}{os.getpid()}"
    pipeline = tmp_path / f"{name}.lua"
    pipeline.write_text(text.replace("ARENA", arena))
    rc, out = weir_text("check", str(pipeline))
    assert rc == 0, f"weir check refused the test's pipeline: {out}"
    log = open(tmp_path / f"{name}.log", "w+")
    proc = subprocess.Popen([WEIR, "run", str(pipeline), "--replace", "--status-every", "5", *extra], stdout=log,
                            stderr=subprocess.STDOUT)
    procs.append((proc, arena, log))
    return proc, arena, log


HEAD = """arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 64 }
driver "sim" { channels = {"a"}, name = "src" }
"""


def test_incidents_repeats_retries_and_a_command(work):
    tmp_path, listener, procs = work
    url = f"http://127.0.0.1:{listener.port}"
    argv_file = tmp_path / "argv.txt"
    script = "import sys; open(sys.argv[1], 'a').write(' '.join(sys.argv[2:]) + chr(10))"
    common = "channels = {\"a\"}, stall_s = 2, for_s = 1, clear_s = 0.5"
    text = HEAD + f"""
alert "stall" {{ when = "writer_stalled", {common}, every_s = 0, webhook = "{url}/hook" }}
alert "repeat" {{ when = "writer_stalled", {common}, every_s = {EVERY_S}, webhook = "{url}/hook" }}
alert "retry" {{ when = "writer_stalled", {common}, every_s = 0, webhook = "{url}/retry" }}
alert "cmd" {{ when = "writer_stalled", {common}, every_s = 0,
               command = {{"{sys.executable}", "-c", "{script}", "{argv_file}", "{{name}}", "{{state}}", "{{subject}}"}} }}
alert "handoff" {{ when = "handoff_failing", window_s = 3, for_s = 0, clear_s = 0, webhook = "{url}/hook" }}
"""
    proc, arena, log = start(tmp_path, procs, "alerts", text)

    def driver():
        kids = [(pid, cmd) for pid, cmd in children(proc.pid) if " sim" in cmd]
        return len(kids) == 1, kids
    sim = wait_until(driver, "the sim driver's process")[0][0]

    passes_after(arena, 0)
    assert proc.poll() is None, "weir run ended early"
    assert listener.bodies("stall") == [], "a healthy pipeline posted a notice"

    for incident in (1, 2):
        os.kill(sim, signal.SIGSTOP)
        held_from = time.monotonic()
        firing = listener.wait_for("stall", 2 * incident - 1, f"incident {incident}: the firing notice")
        body = firing[-1][1]
        assert (body["state"], body["condition"], body["subject"], body["arena"]) == ("firing", "writer_stalled", "a", arena), body
        assert body["value"] > body["threshold"] == 2, body
        assert firing[-1][0] - held_from >= 2 + 1 - 0.5, "fired before stall_s + for_s"
        if incident == 1:  # held past every_s: the repeating alert says it again, every_s apart
            got = listener.wait_for("repeat", 3, "two repeats of the repeating alert")
            # When weir sent each (its `at`), not when it arrived: a delivery held up on a busy
            # machine shortens the gap between arrivals without the notices being any closer.
            times = [sent_at(b) for _, b in got]
            assert [b["repeat"] for _, b in got] == [False, True, True], [b for _, b in got]
            for earlier, later in zip(times, times[1:]):
                assert later - earlier >= EVERY_S - 0.01, f"repeats {later - earlier:.3f} s apart, every_s is {EVERY_S}: {got}"
        listener.wait_for("retry", incident, f"incident {incident}: the retried firing notice")
        os.kill(sim, signal.SIGCONT)
        resolved = listener.wait_for("stall", 2 * incident, f"incident {incident}: the resolved notice")
        assert resolved[-1][1]["state"] == "resolved" and resolved[-1][1]["subject"] == "a", resolved[-1][1]
        assert resolved[-1][1]["started_at"] == body["started_at"], "the resolved notice names another incident"
        listener.wait_for("retry", 2 * incident, f"incident {incident}: the retry alert's resolved notice")

        def command_ran():
            lines = argv_file.read_text().splitlines() if argv_file.exists() else []
            return len(lines) >= 2 * incident, lines
        lines = wait_until(command_ran, f"incident {incident}: the command's two lines in {argv_file}")
        assert lines[2 * incident - 2:2 * incident] == ["cmd firing a", "cmd resolved a"], lines

    # 500 to the first POST: retried, counted, delivered once.
    retry = [b["state"] for _, b in listener.bodies("retry")]
    assert retry == ["firing", "resolved", "firing", "resolved"], retry
    rc, failed = weir_text("get", arena, "weir.alert.retry.failed")
    assert rc == 0 and failed.strip() == "1", f"weir.alert.retry.failed: {failed}"
    rc, sent = weir_text("get", arena, "weir.alert.retry.sent")
    assert rc == 0 and sent.strip() == "4", f"weir.alert.retry.sent: {sent}"

    # handoff_failing reads <part>.handoff_failures: a counter that grows fires, one that stays resolves.
    assert listener.bodies("handoff") == []
    before = passes_after(arena, 0)
    rc, out = weir_text("set", arena, "logger.handoff_failures", "0", "--type", "u64")
    assert rc == 0, out
    passes_after(arena, before + 2)  # a pass has seen 0: the increase below is what fires
    rc, out = weir_text("set", arena, "logger.handoff_failures", "2", "--type", "u64")
    assert rc == 0, out
    got = listener.wait_for("handoff", 2, "handoff_failing firing, then resolved once the window holds no failure")
    assert [(b["state"], b["subject"]) for _, b in got] == [("firing", "logger"), ("resolved", "logger")], got

    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    stall = [b["state"] for _, b in listener.bodies("stall")]
    assert stall == ["firing", "resolved", "firing", "resolved"], f"one firing and one resolved per incident: {stall}"
    log.seek(0)
    text = log.read()
    assert "alert \"retry\": attempt 1:" in text and "answered 500" in text, "the failed attempt was not logged"


def test_a_part_restarting_one_given_up_and_a_disk_below_its_floor(work):
    """part_restarting, part_given_up and disk_below end to end, from the parts' and the disk's real
    figures: the recorder (essential, restarted) SIGKILLed fires part_restarting for it, resolved
    once its window holds no restart; the fft shard (restarts = 0) SIGKILLed is given up and fires
    part_given_up for it alone, unresolved while the run goes on; a floor above any disk fires
    disk_below for the recorder's directory at once, a floor of a KiB never."""
    tmp_path, listener, procs = work
    url = f"http://127.0.0.1:{listener.port}"
    out = tmp_path / "out"
    text = HEAD + f"""
shard "fft" {{ input = "a", output = "a.psd", size = 1024, window = "hann", spectrum = "psd", thread = false, restarts = 0 }}
record "hdf5" {{ channels = {{"a"}}, out = "{out}", rotate_s = 1 }}
alert "restart" {{ when = "part_restarting", parts = {{"record"}}, window_s = 3, for_s = 0, clear_s = 0, webhook = "{url}/hook" }}
alert "down" {{ when = "part_given_up", for_s = 0, webhook = "{url}/hook" }}
alert "full" {{ when = "disk_below", floor_gib = 1e9, for_s = 0, webhook = "{url}/hook" }}
alert "roomy" {{ when = "disk_below", floor_gib = 0.000001, for_s = 0, webhook = "{url}/hook" }}
"""
    proc, arena, log = start(tmp_path, procs, "parts", text)

    full = listener.wait_for("full", 1, "disk_below firing for a floor above any disk")
    assert [(b["state"], b["condition"], b["subject"]) for _, b in full] == [("firing", "disk_below", str(out))], full
    assert full[0][1]["value"] < full[0][1]["threshold"], full[0][1]
    passes = passes_after(arena, 0)
    assert listener.bodies("restart") == [] and listener.bodies("down") == [], "a healthy start fired"

    recorder = part_pid(proc, "record")
    os.kill(recorder, signal.SIGKILL)
    got = listener.wait_for("restart", 2, "part_restarting firing for the killed recorder, then resolved")
    assert [(b["state"], b["subject"]) for _, b in got] == [("firing", "record"), ("resolved", "record")], got
    assert got[0][1]["value"] >= 1, got[0][1]
    assert part_pid(proc, "record") != recorder, "the recorder was not restarted"

    os.kill(part_pid(proc, "shard"), signal.SIGKILL)
    down = listener.wait_for("down", 1, "part_given_up firing for the fft shard")
    assert [(b["state"], b["condition"], b["subject"]) for _, b in down] == [("firing", "part_given_up", "fft:a")], down
    rc, state = weir_text("get", arena, "weir.part.fft:a.state")
    assert rc == 0 and state.strip() == "given up", f"weir.part.fft:a.state: {state}"
    passes_after(arena, passes_after(arena, passes) + 3)  # a few passes more: nothing else comes
    assert [b["state"] for _, b in listener.bodies("down")] == ["firing"], listener.bodies("down")
    assert [b["state"] for _, b in listener.bodies("full")] == ["firing"], listener.bodies("full")
    assert listener.bodies("roomy") == [], f"a floor of a KiB fired: {listener.bodies('roomy')}"
    assert proc.poll() is None, "weir run ended when a part that is not essential was given up"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


def test_a_lagging_lapped_consumer_and_a_slow_writer(work):
    """consumer_lagging, blocks_lost and rate_below end to end: the fft shard (a lossy reader of a
    64-block ring at 100 blocks/s) SIGSTOPped lags past half the ring (firing), and once resumed it
    has been lapped (blocks_lost firing, resolved when its window holds no loss); the sim driver
    SIGSTOPped falls below half its declared rate (firing), resumed it is back (resolved). One
    firing and one resolved body per incident, each naming its subject (the resumed driver's
    catch-up may lap the shard once more: a second blocks_lost incident, after the resume)."""
    tmp_path, listener, procs = work
    url = f"http://127.0.0.1:{listener.port}"
    text = HEAD + f"""
shard "fft" {{ input = "a", output = "a.psd", size = 1024, window = "hann", spectrum = "psd", thread = false }}
alert "lag" {{ when = "consumer_lagging", channels = {{"a"}}, fraction = 0.5, for_s = 0, clear_s = 0, webhook = "{url}/hook" }}
alert "lost" {{ when = "blocks_lost", channels = {{"a"}}, window_s = 3, for_s = 0, clear_s = 0, webhook = "{url}/hook" }}
alert "rate" {{ when = "rate_below", channels = {{"a"}}, fraction = 0.5, for_s = 1, clear_s = 0, webhook = "{url}/hook" }}
"""
    proc, arena, log = start(tmp_path, procs, "lagging", text)

    shard, sim = part_pid(proc, "shard"), part_pid(proc, "sim")
    passes_after(arena, passes_after(arena, 0) + 3)
    with listener.lock:
        assert listener.posts == [], f"a healthy start posted: {listener.posts}"

    os.kill(shard, signal.SIGSTOP)
    try:
        lag = listener.wait_for("lag", 1, "consumer_lagging firing for the stopped shard")
    finally:
        os.kill(shard, signal.SIGCONT)
    body = lag[0][1]
    subject = body["subject"]
    assert (body["state"], body["condition"]) == ("firing", "consumer_lagging") and subject.startswith("a/"), body
    assert body["value"] > body["threshold"] == 32, body
    lag = listener.wait_for("lag", 2, "consumer_lagging resolved once the shard reads again")
    assert [(b["state"], b["subject"]) for _, b in lag] == [("firing", subject), ("resolved", subject)], lag
    lost = listener.wait_for("lost", 2, "blocks_lost firing for the lapped shard, then resolved")
    assert [(b["state"], b["subject"]) for _, b in lost] == [("firing", subject), ("resolved", subject)], lost
    assert lost[0][1]["value"] > 0, lost[0][1]

    os.kill(sim, signal.SIGSTOP)
    try:
        rate = listener.wait_for("rate", 1, "rate_below firing for the stopped sim driver")
    finally:
        os.kill(sim, signal.SIGCONT)
        resumed = time.monotonic()
    body = rate[0][1]
    assert (body["state"], body["condition"], body["subject"]) == ("firing", "rate_below", "a"), body
    assert body["value"] < body["threshold"] == 10000, body
    rate = listener.wait_for("rate", 2, "rate_below resolved once the driver writes again")
    assert [(b["state"], b["subject"]) for _, b in rate] == [("firing", "a"), ("resolved", "a")], rate
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    for name in ("lag", "rate"):
        assert len(listener.bodies(name)) == 2, f"{name}: one firing and one resolved body, got {listener.bodies(name)}"
    # The resumed driver publishes what it owes at once (a paced writer catching up), which may lap the
    # shard again: a second incident of blocks_lost, after the resume and never without its own firing.
    lost = listener.bodies("lost")
    states = [b["state"] for _, b in lost]
    assert states in (["firing", "resolved"], ["firing", "resolved", "firing"], ["firing", "resolved"] * 2), lost
    assert all(t > resumed for t, _ in lost[2:]), f"a second blocks_lost incident before the driver resumed: {lost}"


def test_a_healthy_run_posts_nothing(work):
    tmp_path, listener, procs = work
    url = f"http://127.0.0.1:{listener.port}"
    text = HEAD + f"""
alert "stall" {{ when = "writer_stalled", stall_s = 2, for_s = 1, webhook = "{url}/hook" }}
alert "rate" {{ when = "rate_below", fraction = 0.2, for_s = 2, webhook = "{url}/hook" }}
alert "lag" {{ when = "consumer_lagging", for_s = 1, webhook = "{url}/hook" }}
alert "given_up" {{ when = "part_given_up", for_s = 0, webhook = "{url}/hook" }}
"""
    proc, arena, log = start(tmp_path, procs, "healthy", text, "--keep", "--duration", "8")
    assert proc.wait(timeout=60) == 0, "weir run failed"
    rc, out = weir_text("get", arena, "weir.alerts.passes")
    assert rc == 0 and int(out) >= 5, f"the alerts were evaluated too few times to tell: {out}"
    with listener.lock:
        assert listener.posts == [], f"a healthy run posted: {listener.posts}"
