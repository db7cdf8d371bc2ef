"""/metrics as Prometheus expects it and as `weir ls` reads it: the Grafana dashboard in examples/grafana
queried panel by panel through a real Prometheus scraping a real `weir serve`; labels that survive a
restart; the process_* families against /proc; and rates from one look that agree between `weir ls`
and /metrics, a stalled writer showing the age of its newest block."""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import SCRATCH, WAIT_S, WEIR, arena, processes, run_weir, scratch_dir, serve, wait_for  # noqa: F401
from test_server import free_port, metric, parse_metrics

DASHBOARD = Path(__file__).resolve().parents[3] / "examples" / "grafana" / "weir-dashboard.json"
# 50 blocks/s: the rate window (64 blocks) spans 1.28 s, so a writer late by a few ms on a busy
# machine moves the figure well under 1 %.
RATE_HZ, BLOCK = 100_000, 2000
WINDOW_S = 64 * BLOCK / RATE_HZ
JOB = "weir"


def sim(processes, arena, *channels, rate=RATE_HZ, block=BLOCK):
    proc = processes(WEIR, "sim", arena, *channels, "--rate", rate, "--block", block, "--signal", "sine")
    wait_for(lambda: len(ls_json(arena)["channels"]) >= len(channels), "the sim's channels")
    return proc


def ls_json(arena):
    return json.loads(run_weir("ls", arena, "--json").stdout)


def scrape(server):
    status, _, body = server.request("/metrics")
    assert status == 200, body
    return body.decode()


def dashboard_targets():
    board = json.loads(DASHBOARD.read_text())
    return board, [(p["title"], t["expr"]) for p in board["panels"] for t in p["targets"]]


def substitute(expr):
    """The dashboard's variables as Grafana fills them: this job, every channel, a rate window."""
    return expr.replace("$job", JOB).replace("$channel", ".*").replace("$__rate_interval", "5s")


def test_the_dashboard_is_a_grafana_dashboard_over_weirs_own_metrics(arena, processes, serve):
    board, targets = dashboard_targets()
    assert board["schemaVersion"] >= 36
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], f"panel {panel['title']!r} has no query"
    exprs = " ".join(e for _, e in targets)
    for family in ("weir_channel_samples_per_second", "weir_channel_dropped_blocks_total", "weir_consumer_lag_blocks",
                   "weir_consumer_blocks_lost_total", "weir_stage_duration_p99_seconds", "weir_disk_free_bytes",
                   "process_cpu_seconds_total", "process_resident_memory_bytes"):
        assert family in exprs, f"no panel shows {family}"
    # Every family a panel names is one weir serve exposes (a misspelt name would only ever show "No data").
    sim(processes, arena, "adc0")
    exposed = set(re.findall(r"^# TYPE (\S+) ", scrape(serve(arena, "--disk", str(scratch_dir("")))), re.M))
    used = {n for n in re.findall(r"\b((?:weir|process)_[a-z0-9_]+)", exprs)}
    assert used <= exposed, f"panels query families weir serve does not expose: {sorted(used - exposed)}"


class Prometheus:
    def __init__(self, processes, tmp_path, target):
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.skip("SKIPPED LOUDLY: prometheus is not installed (Debian: prometheus); the dashboard's queries "
                        "were not run")
        self.port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(f"""global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: {JOB}
    static_configs:
      - targets: ['{target}']
""")
        processes(binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                  f"--web.listen-address=127.0.0.1:{self.port}")

    def get(self, path):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            conn.request("GET", path)
            answer = json.loads(conn.getresponse().read())
            conn.close()
            return answer
        except (OSError, ValueError):
            return None

    def query(self, expr):
        answer = self.get(f"/api/v1/query?query={urllib.parse.quote(expr)}")
        if answer is not None and answer.get("status") == "error":
            raise AssertionError(f"Prometheus refused {expr!r}: {answer.get('error')}")
        return answer["data"]["result"] if answer else None


def test_every_dashboard_panel_returns_data_from_a_real_prometheus(arena, processes, serve, tmp_path):
    sim(processes, arena, "adc0", "adc1")
    processes(WEIR, "shard", arena, "stats", "--input", "adc0", "-p", "window=4000")
    server = serve(arena, "--disk", str(scratch_dir("")))
    wait_for(lambda: "weir_stage_duration_p99_seconds{" in scrape(server), "the shard's processing time")
    promtool = shutil.which("promtool")
    if promtool is not None:
        check = subprocess.run([promtool, "check", "metrics"], input=scrape(server).encode(), capture_output=True,
                               timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
    prometheus = Prometheus(processes, tmp_path, f"127.0.0.1:{server.port}")
    _, targets = dashboard_targets()
    deadline = time.monotonic() + 40  # Prometheus starting, then two scrapes inside the rate window
    for title, expr in targets:
        query = substitute(expr)
        while not (result := prometheus.query(query)):
            assert time.monotonic() < deadline, f"panel {title!r}: no data for {query}"
            time.sleep(0.25)
        assert all(r["value"][1] != "NaN" for r in result), f"panel {title!r}: {query} -> {result}"
    # The dashboard's variables: the job list and the channel list.
    jobs = prometheus.get(f"/api/v1/label/job/values?{urllib.parse.urlencode({'match[]': 'weir_arena_info'})}")
    assert JOB in jobs["data"]
    match = urllib.parse.urlencode({"match[]": f'weir_channel_blocks_written_total{{job="{JOB}"}}'})
    assert {"adc0", "adc1"} <= set(prometheus.get(f"/api/v1/label/channel/values?{match}")["data"])
    if promtool is None:
        pytest.skip("SKIPPED LOUDLY: promtool is not installed (Debian: prometheus); the panels ran, the lint did not")


def test_labels_survive_a_restart_and_name_the_arena_and_paths_absolutely(arena, processes, serve):
    sim(processes, arena, "adc0")
    disk = scratch_dir("runs")
    shard = processes(WEIR, "shard", arena, "stats", "--input", "adc0", "-p", "window=4000")
    # A relative --disk (serve runs where this test runs): the label is the absolute path all the same.
    relative = os.path.relpath(disk, os.getcwd())
    assert not os.path.isabs(relative)
    server = serve(arena, "--disk", relative)
    samples, _ = parse_metrics(wait_for(lambda: "weir_consumer_blocks_read_total{" in (t := scrape(server)) and t,
                                        "the shard's consumer row"))
    assert not [s for s in samples if any(k == "pid" for k, _ in s[1])], "a series is labelled by pid"
    assert metric(samples, "weir_disk_free_bytes", path=str(disk.resolve())) > 0
    assert metric(samples, "weir_arena_info", arena=arena, path=f"/dev/shm/weir.{arena}") == 1
    before = {ls for (n, ls) in samples if n == "weir_consumer_blocks_read_total"}
    # The shard dies (its row left behind) and is started again: its series keep their labels.
    shard.kill()
    shard.wait()
    processes(WEIR, "shard", arena, "stats", "--input", "adc0", "-p", "window=4000")

    def restarted():
        s, _ = parse_metrics(scrape(server))
        live = [ls for (n, ls), v in s.items() if n == "weir_consumer_blocks_read_total" and v > 0 and ls in before]
        return s if live and metric(s, "weir_consumer_up", consumer="stats.adc0") == 1 else None

    after = wait_for(restarted, "the restarted shard reading under its old labels")
    assert metric(after, "weir_consumer_up", consumer="stats.adc0", kind="shard:stats") == 1


def process_cpu_seconds(pid):
    """utime + stime of a process from /proc/PID/stat, in seconds (clock ticks: 10 ms each here)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_process_metrics_describe_the_serve_process(arena, serve):
    server = serve(arena)
    cpu_before = process_cpu_seconds(server.proc.pid)
    samples, types = parse_metrics(scrape(server))
    cpu_after = process_cpu_seconds(server.proc.pid)
    assert types["process_cpu_seconds_total"] == "counter"
    rss = metric(samples, "process_resident_memory_bytes")
    assert 0.5 < rss / (server.rss_kib() * 1024) < 2, rss
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    vm_size = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024
    assert 0.9 < metric(samples, "process_virtual_memory_bytes") / vm_size < 1.1
    fds = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
    assert abs(metric(samples, "process_open_fds") - fds) <= 2
    limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
    assert metric(samples, "process_max_fds") == int(re.search(r"Max open files\s+(\d+)", limits).group(1))
    started = metric(samples, "process_start_time_seconds")
    assert abs(started - time.time()) < 60, f"process_start_time_seconds {started} is not a moment ago"
    # The kernel's own count around the scrape (a server that has just started may have used less
    # than one clock tick: 0 is then the right answer).
    cpu = metric(samples, "process_cpu_seconds_total")
    assert cpu_before <= cpu <= cpu_after, (cpu_before, cpu, cpu_after)


def rates(arena, server):
    ls = {c["name"]: c for c in ls_json(arena)["channels"]}
    samples, _ = parse_metrics(scrape(server))
    return ls, samples


def within(value, want, share=0.05):
    return abs(value - want) <= share * want


def test_ls_and_metrics_show_the_true_rate_at_one_look(arena, processes, serve):
    sim(processes, arena, "adc0")
    server = serve(arena)
    time.sleep(WINDOW_S + 0.3)  # a full rate window written
    ls, samples = rates(arena, server)  # one look each: no --watch, no second scrape
    adc0 = ls["adc0"]
    nominal_blocks = RATE_HZ / BLOCK
    assert within(adc0["blocks_per_s"], nominal_blocks), adc0
    assert within(adc0["samples_per_s"], RATE_HZ), adc0
    assert adc0["newest_block_age_s"] < 1 and adc0["stalled"] is False, adc0
    exposed = metric(samples, "weir_channel_blocks_per_second", channel="adc0")
    assert within(exposed, adc0["blocks_per_s"]), (exposed, adc0["blocks_per_s"])
    assert within(metric(samples, "weir_channel_samples_per_second", channel="adc0"), adc0["samples_per_s"])
    api = {c["name"]: c for c in server.json("/api/channels")["channels"]}["adc0"]  # the page's figure too
    assert within(api["blocks_per_s"], adc0["blocks_per_s"]), (api["blocks_per_s"], adc0["blocks_per_s"])
    text = run_weir("ls", arena).stdout
    row = next(line for line in text.splitlines() if line.strip().startswith("adc0"))
    shown = float(row.split()[5])  # CHANNEL TYPE RATE BLOCK WRITTEN BLOCKS/s
    assert within(shown, nominal_blocks), text


def test_a_stalled_writer_shows_the_age_of_its_newest_block(arena, processes, serve):
    writer = sim(processes, arena, "adc0")
    server = serve(arena)
    time.sleep(WINDOW_S + 0.3)
    writer.send_signal(signal.SIGSTOP)
    try:
        time.sleep(2.5)
        ls, samples = rates(arena, server)
        text = run_weir("ls", arena).stdout
    finally:
        writer.send_signal(signal.SIGCONT)
    adc0 = ls["adc0"]
    assert adc0["stalled"] is True and adc0["newest_block_age_s"] >= 2.4, adc0
    assert adc0["blocks_per_s"] < 0.5 * RATE_HZ / BLOCK, f"the rate did not decay while stalled: {adc0}"
    assert metric(samples, "weir_channel_newest_block_age_seconds", channel="adc0") >= 2.4
    assert re.search(r"stalled: newest block \d+\.\d s old", text), text
    # Writing again, the next look is live at once.
    wait_for(lambda: not ls_json(arena)["channels"][0]["stalled"], "the writer to be live again")
