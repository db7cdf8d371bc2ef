"""Interop: what `weir kafka send` puts on a topic, read by the tools a facility uses. The schemas
are compiled here with `flatc --python` from kafka/schemas (apart from the C++ side's generated
code); confluent_kafka (Debian's python3-confluent-kafka) reads the topics from `weir kafka mock`,
and the se00, f144 and x5f2 messages decode field by field. kcat reads the same topic."""
import importlib.util
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

WEIR = os.environ["WEIR_CLI"]
SCHEMAS = Path(os.environ["WEIR_KAFKA_SCHEMAS"])
FLATC = os.environ.get("WEIR_FLATC", "flatc")
TOPIC = "weir.interop"
STATUS_TOPIC = "weir.interop.status"
BLOCKS = 20
BLOCK = 256
RATE = 1e5


def weir(*args):
    result = subprocess.run([WEIR, *map(str, args)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"weir {' '.join(map(str, args))}: {result.stderr}"
    return result.stdout


def load_schema(out, stem, *modules):
    """flatc --python for one schema into its own folder (the schemas share table names); its modules."""
    folder = out / stem
    subprocess.run([FLATC, "--python", "-o", str(folder), "-I", str(SCHEMAS), str(SCHEMAS / f"{stem}.fbs")], check=True)
    loaded = {}
    for name in modules:
        spec = importlib.util.spec_from_file_location(f"{stem}_{name}", folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[name] = getattr(module, name)
    return loaded


def read_topic(bootstrap, topic, count, timeout=20.0):
    """The first `count` messages of partition 0, oldest first."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "weir-interop", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    messages = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                messages.append(m)
    finally:
        consumer.close()
    return messages


@pytest.fixture(scope="module")
def sent(tmp_path_factory):
    """A mock cluster, an arena with a channel of known samples and one f64 key, sent by weir."""
    mock = subprocess.Popen([WEIR, "kafka", "mock", "--brokers", "3", "--topic", TOPIC, "--topic", STATUS_TOPIC],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    arena = f"pyk-{os.getpid()}"
    sender = None
    try:
        ready, _, _ = select.select([mock.stdout], [], [], 20)
        assert ready, "weir kafka mock printed no bootstrap address in 20 s"
        bootstrap = mock.stdout.readline().strip()
        assert bootstrap.startswith("127.0.0.1:"), bootstrap
        subprocess.run([WEIR, "rm", arena, "--force"], capture_output=True)
        weir("create", arena)
        # A square wave of amplitude 1: every sample is exactly -1 or 1.
        weir("sim", arena, "adc0", "--rate", RATE, "--block", BLOCK, "--blocks", BLOCKS, "--fast", "--signal", "square",
             "--amplitude", 1, "--frequency", 1000)
        weir("set", arena, "stage.temp", "21.5", "--type", "f64")
        sender = subprocess.Popen([WEIR, "kafka", "send", arena, "--brokers", bootstrap, "--topic", TOPIC, "--name", "py",
                                   "--channel", "adc0", "--keys", "stage.*", "--status-topic", STATUS_TOPIC,
                                   "--status-ms", "200"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        yield {"bootstrap": bootstrap, "out": tmp_path_factory.mktemp("schemas")}
    finally:
        for p in (sender, mock):
            if p is not None:
                p.terminate()
                p.wait(timeout=30)
        subprocess.run([WEIR, "rm", arena, "--force"], capture_output=True)


def test_python_decodes_se00_and_f144_from_the_topic(sent):
    se00 = load_schema(sent["out"], "se00_data", "se00_SampleEnvironmentData", "ValueUnion", "FloatArray", "Location")
    f144 = load_schema(sent["out"], "f144_logdata", "f144_LogData", "Value", "Double")
    messages = read_topic(sent["bootstrap"], TOPIC, BLOCKS + 1)
    assert len(messages) == BLOCKS + 1, f"{len(messages)} messages on {TOPIC}"
    counters = []
    for m in messages:
        buf = bytearray(m.value())
        if m.key() == b"stage.temp":
            assert f144["f144_LogData"].f144_LogDataBufferHasIdentifier(buf, 0)
            log = f144["f144_LogData"].GetRootAs(buf, 0)
            assert log.SourceName() == b"stage.temp"
            assert log.Timestamp() > 1_600_000_000 * 10**9
            assert log.ValueType() == f144["Value"].Double
            value = f144["Double"]()
            value.Init(log.Value().Bytes, log.Value().Pos)
            assert value.Value() == 21.5
            continue
        assert m.key() == b"adc0"
        assert se00["se00_SampleEnvironmentData"].se00_SampleEnvironmentDataBufferHasIdentifier(buf, 0)
        data = se00["se00_SampleEnvironmentData"].GetRootAs(buf, 0)
        assert data.Name() == b"adc0"
        assert data.Channel() == -1
        assert data.TimeDelta() == 1e9 / RATE
        assert data.TimestampLocation() == se00["Location"].Start
        assert data.PacketTimestamp() > 1_600_000_000 * 10**9
        assert data.ValuesType() == se00["ValueUnion"].FloatArray
        values = se00["FloatArray"]()
        values.Init(data.Values().Bytes, data.Values().Pos)
        samples = values.ValueAsNumpy()
        assert len(samples) == BLOCK
        assert set(samples.tolist()) == {-1.0, 1.0}
        assert m.headers() is None  # nothing was dropped: no weir.gaps header
        counters.append(data.MessageCounter())
    assert counters == list(range(BLOCKS))


def test_python_decodes_the_x5f2_heartbeat(sent):
    x5f2 = load_schema(sent["out"], "x5f2_status", "Status")
    messages = read_topic(sent["bootstrap"], STATUS_TOPIC, 1)
    assert messages, f"no heartbeat on {STATUS_TOPIC}"
    buf = bytearray(messages[0].value())
    assert x5f2["Status"].StatusBufferHasIdentifier(buf, 0)
    status = x5f2["Status"].GetRootAs(buf, 0)
    assert status.SoftwareName() == b"weir"
    assert status.ServiceId() == b"py"
    assert status.UpdateInterval() == 200
    assert status.ProcessId() > 0
    figures = json.loads(status.StatusJson())
    assert figures["topic"] == TOPIC and figures["lossless"] is True


def test_kcat_reads_the_topic(sent):
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.skip("kcat is not installed (Debian package kcat): the kcat interop check did not run")
    result = subprocess.run([kcat, "-C", "-b", sent["bootstrap"], "-t", TOPIC, "-c", str(BLOCKS + 1), "-e",
                             "-f", "%k %S\n"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == BLOCKS + 1, result.stdout
    keys = sorted(line.split()[0] for line in lines)
    assert keys.count("adc0") == BLOCKS and keys.count("stage.temp") == 1
    sizes = [int(line.split()[1]) for line in lines if line.startswith("adc0 ")]
    assert all(size > BLOCK * 4 for size in sizes)  # the samples and the fields around them
