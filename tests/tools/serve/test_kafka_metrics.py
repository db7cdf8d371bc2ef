"""/metrics of a real Kafka sender and receiver: `weir kafka send` and `weir kafka recv` through
`weir kafka mock` (3 brokers, replication 3), one arena, `weir serve` over it. Once the sender has
stopped (flushed), every weir_kafka_* series holds the exact count: the blocks `weir sim` wrote,
sent and delivered; the same messages received into the far channel; the bytes on both sides
equal; nothing failed, dropped, late or queued. promtool lints the exposition."""
import json
import select
import shutil
import signal
import subprocess

import pytest

from conftest import WAIT_S, WEIR, arena, processes, run_weir, serve, wait_for  # noqa: F401
from test_server import parse_metrics

BLOCKS, BLOCK = 60, 1000  # the sim's default ring holds them all before the sender attaches
TOPIC = "weir.metrics"


def keys(arena):
    """Every kafka.* key with its value, from `weir keys` and `weir get`."""
    names = [k["key"] for k in json.loads(run_weir("keys", arena, "--json").stdout)["keys"] if k["key"].startswith("kafka.")]
    return {n: json.loads(run_weir("get", arena, n, "--json").stdout)["value"] for n in names}


def key(arena, name):
    got = run_weir("get", arena, name, "--json", check=False)
    return json.loads(got.stdout)["value"] if got.returncode == 0 else None


def value(samples, family, **labels):
    """The one sample of `family` with these labels (a client's label is `name`, so not test_server's metric())."""
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == family and want <= set(ls)]
    assert len(found) == 1, f"{len(found)} samples {family} {labels}"
    return found[0]


def scrape(server):
    status, _, body = server.request("/metrics")
    assert status == 200, body
    return body.decode()


@pytest.fixture
def bootstrap(processes):
    mock = processes(WEIR, "kafka", "mock", "--brokers", "3", "--topic", TOPIC, stdout=subprocess.PIPE)
    ready, _, _ = select.select([mock.stdout], [], [], WAIT_S)
    assert ready, "weir kafka mock printed no bootstrap address"
    address = mock.stdout.readline().strip()
    assert address.startswith("127.0.0.1:"), address
    return address


def test_kafka_series_hold_the_exact_counts_after_the_sender_stops(arena, processes, serve, bootstrap):
    run_weir("sim", arena, "adc0", "--rate", 1e5, "--block", BLOCK, "--blocks", BLOCKS, "--fast", "--signal", "sine")
    sender = processes(WEIR, "kafka", "send", arena, "--brokers", bootstrap, "--topic", TOPIC, "--name", "daq1",
                       "--channel", "adc0")
    processes(WEIR, "kafka", "recv", arena, "--brokers", bootstrap, "--topic", TOPIC, "--name", "far", "--channel",
              "far0", "--source", "adc0")
    server = serve(arena)
    wait_for(lambda: key(arena, "kafka.far.received") == BLOCKS, "the far channel to receive every block")
    wait_for(lambda: key(arena, "kafka.daq1.delivered") == BLOCKS, "every delivery report")
    sender.send_signal(signal.SIGINT)
    assert sender.wait(timeout=WAIT_S) == 0, sender.stderr.read()
    # The receiver refreshes its lag about once a second from the watermarks its fetches bring.
    wait_for(lambda: key(arena, "kafka.far.lag") == 0, "the receiver's lag to come down to 0")
    text = scrape(server)
    samples, types = parse_metrics(text)
    k = keys(arena)

    def send(outcome):
        return value(samples, "weir_kafka_messages_total", name="daq1", role="send", outcome=outcome)

    def recv(outcome):
        return value(samples, "weir_kafka_messages_total", name="far", role="recv", outcome=outcome)

    assert (send("sent"), send("delivered"), send("failed"), send("dropped"), send("lost")) == (BLOCKS, BLOCKS, 0, 0, 0)
    assert (recv("received"), recv("late"), recv("dropped"), recv("refused"), recv("malformed")) == (BLOCKS, 0, 0, 0, 0)
    sent_bytes = value(samples, "weir_kafka_bytes_total", name="daq1", role="send")
    # The sender counts message bytes (the f32 samples and each se00 message's fields, under 256 bytes);
    # the receiver the sample bytes it published.
    assert sent_bytes == k["kafka.daq1.bytes"]
    assert BLOCKS * BLOCK * 4 < sent_bytes < BLOCKS * (BLOCK * 4 + 256)
    assert value(samples, "weir_kafka_bytes_total", name="far", role="recv") == k["kafka.far.bytes"] == BLOCKS * BLOCK * 4
    assert value(samples, "weir_kafka_gap_blocks_total", name="far", role="recv") == 0
    assert value(samples, "weir_kafka_gap_blocks_total", name="daq1", role="send") == 0
    assert value(samples, "weir_kafka_queue_messages", name="daq1") == 0
    assert value(samples, "weir_kafka_channels", name="daq1") == 1
    assert value(samples, "weir_kafka_partitions", name="far") == 1
    assert value(samples, "weir_kafka_link_info", name="daq1", link="idle") == 1
    assert value(samples, "weir_kafka_link_info", name="far", link="assigned") == 1
    assert value(samples, "weir_kafka_lag_messages", name="far") == k["kafka.far.lag"] == 0
    assert types["weir_kafka_messages_total"] == "counter" and types["weir_kafka_queue_messages"] == "gauge"
    # Every family with HELP and TYPE, counters named _total, no pid label: as promtool wants them.
    assert "pid=" not in "".join(line for line in text.splitlines() if line.startswith("weir_kafka_"))
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("SKIPPED LOUDLY: promtool is not installed (Debian: prometheus); the counts were checked, the "
                    "lint was not")
    check = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_no_kafka_client_no_kafka_family(arena, serve):
    assert "weir_kafka_" not in scrape(serve(arena))
