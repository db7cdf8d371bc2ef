"""The HTTP door into an arena's runs over real loopback sockets: GET /api/run idle and running (a run
started by another door too), POST /api/run/start, /stop and /abort refused without --allow-control
(403) or a token (401), a start that returns its number, a second start refused naming the run that
holds the state (409), a stop that returns the run log row, bad bodies refused naming the field
(400), and the run gauges of /metrics."""
import json
import shutil
import signal
import subprocess
import threading
import time

import pytest

from conftest import WAIT_S, WEIR, arena, processes, run_weir, serve, start_sim, wait_for  # noqa: F401
from test_server import metric, parse_metrics

TOKEN = "run-s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@pytest.fixture
def run_dir(tmp_path):
    return tmp_path / "runs"


def controlled(serve, arena, tmp_path, *extra):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    return serve(arena, "--allow-control", "--token-file", token_file, *extra)


def post(server, verb, body=None, headers=AUTH):
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    status, response_headers, text = server.request(f"/api/run/{verb}", method="POST", body=data, headers=headers)
    assert response_headers["Content-Type"] == "application/json", (verb, status, text)
    return status, json.loads(text)


def gauges(server, headers=None):
    samples, types = parse_metrics(server.request("/metrics", headers=headers or {})[2].decode())
    for name in ("weir_run_number", "weir_run_state", "weir_run_started_timestamp_seconds"):
        assert types[name] == "gauge", name
    return (metric(samples, "weir_run_number"), metric(samples, "weir_run_state"),
            metric(samples, "weir_run_started_timestamp_seconds"))


def test_api_run_shows_the_run_idle_and_running_whatever_door_started_it(arena, serve, run_dir):
    server = serve(arena)
    idle = server.json("/api/run")
    assert idle["state"] == "idle" and idle["run"] == 0 and idle["elapsed_s"] is None
    assert idle["enabled"] is False and idle["dir"] == "" and idle["recorders"] == []
    assert gauges(server) == (0, 0, 0)
    run_weir("runctl", "enable", arena, run_dir)
    run_weir("runctl", "start", arena, "--title", "cosmics", "--operator", "Ada", "--sample", "Si", "--comment", "c")
    running = server.json("/api/run")
    assert running["state"] == "running" and running["run"] == 1 and running["door"] == "cli"
    assert (running["title"], running["operator"], running["sample"], running["comment"]) == ("cosmics", "Ada", "Si", "c")
    assert running["enabled"] is True and running["dir"] == str(run_dir.resolve())
    assert 0 <= running["elapsed_s"] < WAIT_S and running["start_ns"] > 0
    number, state, started = gauges(server)
    assert (number, state) == (1, 1) and started == pytest.approx(running["start_ns"] / 1e9, abs=1e-6)
    run_weir("runctl", "stop", arena)
    stopped = server.json("/api/run")
    assert stopped["state"] == "idle" and stopped["run"] == 1 and stopped["ended"] == "stopped"
    assert stopped["elapsed_s"] is None and stopped["stop_ns"] >= stopped["start_ns"]
    assert gauges(server)[:2] == (1, 0)


def test_control_is_refused_without_allow_control_and_allow_control_without_a_token(arena, serve, run_dir):
    run_weir("runctl", "enable", arena, run_dir)
    server = serve(arena)
    for verb in ("start", "stop", "abort"):
        status, answer = post(server, verb, {}, headers={"Content-Type": "application/json"})
        assert status == 403 and "not allowed" in answer["error"] and "--allow-control" in answer["error"], answer
    assert server.json("/api/run")["state"] == "idle"
    refused = subprocess.run([WEIR, "serve", arena, "--port", "0", "--allow-control"], capture_output=True, text=True,
                             timeout=WAIT_S)
    assert refused.returncode == 2
    assert "--allow-control" in refused.stderr and "--token" in refused.stderr, refused.stderr
    refused = subprocess.run([WEIR, "run", "nowhere.lua", "--serve", "127.0.0.1:0", "--serve-allow-control"],
                             capture_output=True, text=True, timeout=WAIT_S)
    assert refused.returncode == 2
    assert "--serve-allow-control" in refused.stderr and "--serve-token-file" in refused.stderr, refused.stderr


def test_start_and_stop_over_http_with_the_token(arena, serve, run_dir, tmp_path):
    run_weir("runctl", "enable", arena, run_dir)
    server = controlled(serve, arena, tmp_path)
    assert server.json("/api/server", headers={"Authorization": f"Bearer {TOKEN}"})["allow_control"] is True
    assert server.request("/api/run/start", method="POST", body="{}",
                          headers={"Content-Type": "application/json"})[0] == 401
    status, started = post(server, "start", {"title": "first light", "operator": "Ada", "sample": "Si"})
    assert status == 200 and started["run"] == 1, started
    assert started["state"] == "running" and started["door"] == "http" and started["title"] == "first light"
    # The state machine refuses a second start, naming the run that holds it.
    status, again = post(server, "start", {"title": "second"})
    assert status == 409 and "run 1 (started by http) is running" in again["error"], again
    assert json.loads(run_weir("runctl", "status", arena, "--json").stdout)["run"] == 1
    number, state, started_s = gauges(server, {"Authorization": f"Bearer {TOKEN}"})
    assert (number, state) == (1, 1) and started_s == pytest.approx(started["start_ns"] / 1e9, abs=1e-6)
    # Only the run named is stopped; then the row of the run it ended, once no recorder holds its files.
    status, wrong = post(server, "stop", {"run": 2})
    assert status == 409 and "run 1" in wrong["error"], wrong
    status, row = post(server, "stop", {"run": 1})
    assert status == 200, row
    assert row["run"] == 1 and row["ended"] == "stopped" and row["closed"] is True and row["late"] == []
    assert (row["files"], row["blocks_written"], row["blocks_recorded"], row["blocks_lost"]) == (0, 0, 0, 0)
    assert row["exact"] is True and row["door"] == "http" and row["title"] == "first light"
    status, idle = post(server, "stop")
    assert status == 409 and "no run is running" in idle["error"], idle
    status, idle = post(server, "abort", {})
    assert status == 409, idle
    # The next run gets the next number; an abort ends it so, and the run log keeps both.
    status, second = post(server, "start", {"number": 5})
    assert status == 200 and second["run"] == 5, second
    status, aborted = post(server, "abort", "")
    assert status == 200 and aborted["run"] == 5 and aborted["ended"] == "aborted", aborted
    runs = json.loads(run_weir("runs", "ls", run_dir, "--json").stdout)["runs"]
    assert [(r["run"], r["ended"], r["door"]) for r in runs] == [(1, "stopped", "http"), (5, "aborted", "http")]
    assert gauges(server, {"Authorization": f"Bearer {TOKEN}"})[:2] == (5, 0)


def test_bad_bodies_are_refused_naming_the_field(arena, serve, run_dir, tmp_path):
    run_weir("runctl", "enable", arena, run_dir)
    server = controlled(serve, arena, tmp_path)
    for body, reason in ((b"{not json", "not JSON"),
                         (b"[1, 2]", "JSON object"),
                         (b'{"title": "ok", "sample": "\xff\xfe"}', '"sample" is not UTF-8'),
                         (b'{"operator": "\\udc80"}', '"operator" is not UTF-8'),
                         (json.dumps({"title": 5}), '"title" must be a string'),
                         (json.dumps({"number": "7"}), '"number" must be a positive integer'),
                         (json.dumps({"titel": "x"}), 'unknown field "titel"'),
                         (json.dumps({"title": "x" * 257}), "run title: 257 bytes"),
                         (json.dumps({"comment": "a\x01b"}), "run comment: a control character")):
        status, answer = post(server, "start", body)
        assert status == 400 and reason in answer["error"], (body, status, answer)
    status, answer = post(server, "stop", json.dumps({"run": -1}))
    assert status == 400 and '"run"' in answer["error"], answer
    assert server.json("/api/run", headers=AUTH)["state"] == "idle"
    # A body of another type, a browser page of another origin, a GET: refused before any transition.
    status, answer = post(server, "start", "{}", headers={**AUTH, "Content-Type": "text/plain"})
    assert status == 415, answer
    status, answer = post(server, "start", "{}", headers={**AUTH, "Origin": "http://evil.example"})
    assert status == 403 and "cross-origin" in answer["error"], answer
    status, _, text = server.request("/api/run/start", headers=AUTH)
    assert status == 405, text
    status, _, text = server.request("/api/run/pause", method="POST", body="{}", headers=AUTH)
    assert status == 404, text
    assert server.json("/api/run", headers=AUTH)["run"] == 0


def test_a_start_without_a_run_directory_is_refused_saying_how_to_enable(arena, serve, tmp_path):
    server = controlled(serve, arena, tmp_path)
    status, answer = post(server, "start", {})
    assert status == 409 and "weir runctl enable" in answer["error"], answer


def test_metrics_with_the_run_gauges_pass_promtool(arena, serve, run_dir, tmp_path):
    run_weir("runctl", "enable", arena, run_dir)
    server = controlled(serve, arena, tmp_path)
    assert post(server, "start", {})[0] == 200
    body = server.request("/metrics", headers=AUTH)[2]
    assert b"# HELP weir_run_started_timestamp_seconds " in body
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: prometheus); the gauges were read but not linted")
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_stop_waits_for_a_real_recorder_off_the_io_thread(arena, processes, serve, run_dir, tmp_path):
    """A recorder taking part in controlled runs: the stop answers once it closed the run's files, with
    the ledger of what they hold. Held with SIGSTOP, it keeps the next stop waiting its wait_s, and the
    server answers GET /api/run meanwhile (the wait runs on the control thread, not the I/O thread)."""
    start_sim(processes, arena, "adc0", rate="1e5")
    run_weir("runctl", "enable", arena, run_dir)
    recorder = processes(WEIR, "record", arena, "--channels", "adc0", "--out", run_dir, "--controlled")
    server = controlled(serve, arena, tmp_path)
    wait_for(lambda: server.json("/api/run", headers=AUTH)["recorders"], "the recorder's row")
    status, started = post(server, "start", {"title": "recorded"})
    assert status == 200, started
    wait_for(lambda: any(r["open_run"] == started["run"] for r in server.json("/api/run", headers=AUTH)["recorders"]),
             "the recorder to open the run's files")
    time.sleep(0.5)
    status, row = post(server, "stop", {"run": started["run"]})
    assert status == 200 and row["closed"] is True and row["late"] == [], row
    assert row["files"] >= 1 and row["blocks_recorded"] > 0 and row["blocks_lost"] == 0 and row["exact"] is True, row
    status, second = post(server, "start", {})
    assert status == 200, second
    wait_for(lambda: any(r["open_run"] == second["run"] for r in server.json("/api/run", headers=AUTH)["recorders"]),
             "the recorder to open the second run's files")
    recorder.send_signal(signal.SIGSTOP)
    try:
        answer = {}
        stopping = threading.Thread(target=lambda: answer.update(zip(("status", "row"), post(
            server, "stop", {"run": second["run"], "wait_s": 3}))))
        began = time.monotonic()
        stopping.start()
        time.sleep(0.5)
        idle = server.json("/api/run", headers=AUTH)  # answered while the stop waits
        assert time.monotonic() - began < 2 and idle["state"] == "idle" and stopping.is_alive()
        stopping.join(timeout=WAIT_S)
        assert 3 <= time.monotonic() - began < WAIT_S
        assert answer["status"] == 200 and answer["row"]["closed"] is False, answer
        assert answer["row"]["late"] == [recorder.pid], answer
    finally:
        recorder.send_signal(signal.SIGCONT)
