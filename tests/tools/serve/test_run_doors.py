"""Four doors into one arena's runs at once, racing for 200 transitions: the command line (`weir runctl`),
HTTP (`weir serve --allow-control`), the Kafka control topic (`weir kafka control`, fed pl72/6s4t by
`weir kafka run` through `weir kafka mock`) and the pipeline's schedule under `weir run`. Only
consistent transitions happen: the run log numbers every run once, in order, each one ended and
exact; every refusal, through any door, names the run that won; every door won some runs."""
import json
import os
import re
import select
import signal
import subprocess
import threading
import time

from conftest import WAIT_S, WEIR, processes, run_weir, scratch_dir, serve, wait_for  # noqa: F401

TRANSITIONS = 200
TOKEN = "run-doors-token"
CONTROL = "weir.run.doors"
PIPELINE = """
arena {{ name = "{arena}", channels = 4, pool_mib = 16, runs = "controlled",
        schedule = {{ start = true, stop_after_s = 0.05, restart = true }} }}
channel "adc0" {{ dtype = "i16", rate = 1e6, block = 4096, ring = 256 }}
driver "sim" {{ channels = {{"adc0"}}, signal = "noise" }}
record "hdf5" {{ channels = {{"adc*"}}, out = "{out}" }}
"""
NAMED = re.compile(r"refused: (run \d+ \(started by [^)]+\) is|no run is running \((run \d+ was|none has run in this arena))")


def status(arena):
    got = run_weir("runctl", "status", arena, "--json", check=False)
    return json.loads(got.stdout) if got.returncode == 0 else None


def test_four_doors_racing_make_one_run_at_a_time_and_every_refusal_names_the_winner(processes, serve):
    arena = f"rundoors{os.getpid()}"
    work = scratch_dir(arena)
    out = work / "out"
    pipeline = work / "pipeline.lua"
    pipeline.write_text(PIPELINE.format(arena=arena, out=out))
    mock = processes(WEIR, "kafka", "mock", "--brokers", "1", "--topic", CONTROL, stdout=subprocess.PIPE)
    ready, _, _ = select.select([mock.stdout], [], [], WAIT_S)
    assert ready, "weir kafka mock printed no bootstrap address"
    brokers = mock.stdout.readline().strip()
    run = processes(WEIR, "run", str(pipeline), stdout=subprocess.PIPE)
    wait_for(lambda: (s := status(arena)) and s["dir"] and any(r["alive"] for r in s["recorders"]),
             "the recorder to join the run control")
    server = serve(arena, "--token", TOKEN, "--allow-control")
    kafka_door = processes(WEIR, "kafka", "control", arena, "--brokers", brokers, "--topic", CONTROL)
    refusals, odd = [], []
    done = threading.Event()

    def refused(text):
        refusals.append(text)
        if not NAMED.search(text):
            odd.append(text)

    def cli():
        for i in range(10**6):
            if done.is_set():
                return
            verb = ["start", arena, "--title", "cli"] if i % 2 == 0 else ["stop", arena, "--wait-s", "30"]
            got = run_weir("runctl", *verb, check=False)
            if got.returncode != 0:
                refused(got.stderr)

    def http():
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        for i in range(10**6):
            if done.is_set():
                return
            path, body = ("/api/run/start", '{"title": "http"}') if i % 2 else ("/api/run/stop", "{}")
            code, _, data = server.request(path, method="POST", body=body, headers=headers)
            assert code in (200, 409), (code, data)
            if code == 409:
                refused(json.loads(data)["error"])

    def kafka():
        for i in range(10**6):
            if done.is_set():
                return
            job = f"job-{i // 2}"
            verb = ["start", "--job-id", job, "--run-name", "kafka"] if i % 2 == 0 else ["stop", "--job-id", job]
            run_weir("kafka", "run", *verb, "--brokers", brokers, "--topic", CONTROL)
            time.sleep(0.05)

    threads = [threading.Thread(target=f) for f in (cli, http, kafka)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: status(arena)["transitions"] >= TRANSITIONS, f"{TRANSITIONS} transitions", timeout=300,
                 interval=0.2)
    finally:
        done.set()
        for t in threads:
            t.join(timeout=120)
    kafka_door.send_signal(signal.SIGINT)
    assert kafka_door.wait(timeout=WAIT_S) == 0
    door_log = kafka_door.stderr.read()
    for line in door_log.splitlines():
        if "refused" in line:
            refused(line)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 0, run.stderr.read()
    assert not odd, f"{len(odd)} refusal(s) that name no run, e.g. {odd[0]!r}"
    rows = json.loads(run_weir("runs", "ls", out, "--json").stdout)["runs"]
    assert [r["run"] for r in rows] == list(range(1, len(rows) + 1))  # every number once, in order
    assert len(rows) >= TRANSITIONS // 2 - 1
    for r in rows:
        assert r["ended"] == "stopped" and r["exact"], r
    doors = {r["door"] for r in rows}
    assert {"cli", "http", "schedule"} <= doors, doors  # the doors that ended runs
    started = [line for line in door_log.splitlines() if re.search(r"pl72 job \S+ \(kafka\): run \d+ started", line)]
    assert started, door_log  # the Kafka door won some starts too
    audit = run_weir("audit", out, "--all-runs", check=False)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    print(f"{len(rows)} runs, {len(refusals)} refusals, doors that ended runs: {sorted(doors)}")
