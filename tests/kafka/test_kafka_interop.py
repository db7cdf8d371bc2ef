"""Interop: what `weir kafka send` puts on a topic, read by the tools a facility uses. The schemas
are compiled here with `flatc --python` from kafka/schemas (apart from the C++ side's generated
code); confluent_kafka (Debian's python3-confluent-kafka) reads the topics from `weir kafka mock`,
and the se00, f144, x5f2, hs01 (the fft shard's spectra), ev44 (the MCA shard's pulses), pl72 and 6s4t (`weir kafka
run start|stop`) messages decode field by field. kcat reads the same topic."""
import importlib.util
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

WEIR = os.environ["WEIR_CLI"]
SCHEMAS = Path(os.environ["WEIR_KAFKA_SCHEMAS"])
FLATC = os.environ.get("WEIR_FLATC", "flatc")
TOPIC = "weir.interop"
STATUS_TOPIC = "weir.interop.status"
KINDS_TOPIC = "weir.interop.kinds"
CONTROL_TOPIC = "weir.interop.control"
FFT_SIZE = 256
SINE_HZ = 5000
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
        sys.modules[spec.name] = module
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
    mock = subprocess.Popen([WEIR, "kafka", "mock", "--brokers", "3", "--topic", TOPIC, "--topic", STATUS_TOPIC,
                             "--topic", KINDS_TOPIC, "--topic", CONTROL_TOPIC],
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
        yield {"bootstrap": bootstrap, "out": tmp_path_factory.mktemp("schemas"), "arena": arena}
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


def channels(arena):
    listing = json.loads(weir("ls", arena, "--json"))
    return {c["name"]: c for c in listing["channels"]}


def key(arena, name):
    """A key's value as `weir get` prints it; "" while it is missing."""
    result = subprocess.run([WEIR, "get", arena, name], capture_output=True, text=True, timeout=60)
    return result.stdout.strip() if result.returncode == 0 else ""


def wait_for(predicate, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_python_decodes_hs01_spectra_and_ev44_pulses(sent):
    """The fft shard's spectra as hs01 and the MCA shard's pulses as ev44, every block one message."""
    hs01 = load_schema(sent["out"], "hs01_event_histogram", "EventHistogram", "Array", "ArrayFloat", "ArrayDouble",
                       "DimensionMetaData")
    # EventHistogram.DimMetadata() imports its table by its bare module name (only hs01 has it).
    sys.modules.setdefault("DimensionMetaData", sys.modules[hs01["DimensionMetaData"].__module__])
    ev44 = load_schema(sent["out"], "ev44_events", "Event44Message")
    arena = sent["arena"]
    weir("sim", arena, "sig", "--rate", RATE, "--block", BLOCK, "--blocks", 1, "--fast", "--signal", "sine",
         "--frequency", SINE_HZ)
    weir("sim", arena, "det", "--rate", 1e6, "--block", 1000, "--blocks", 1, "--fast", "--signal", "pulses",
         "--count-rate", 5000, "--seed", 3)
    shards = [subprocess.Popen([WEIR, "shard", arena, "fft", "-i", "sig", "--policy", "lossless", "-p",
                                f"size={FFT_SIZE}", "-p", "overlap=0", "-p", "plan=estimate", "-p", "wisdom=off"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
              subprocess.Popen([WEIR, "shard", arena, "mca", "-i", "det", "--policy", "lossless"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    sender = None
    try:
        wait_for(lambda: {"sig.psd", "det.pulses"} <= set(channels(arena)), "the shards' outputs")
        sender = subprocess.Popen([WEIR, "kafka", "send", arena, "--brokers", sent["bootstrap"], "--topic", KINDS_TOPIC,
                                   "--name", "pykinds", "--channel", "sig.psd", "--channel", "det.pulses"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: key(arena, "kafka.pykinds.channels") == "2", "the sender's two channels")
        weir("sim", arena, "sig", "--rate", RATE, "--block", BLOCK, "--blocks", BLOCKS, "--fast", "--signal", "sine",
             "--frequency", SINE_HZ)
        weir("sim", arena, "det", "--rate", 1e6, "--block", 1000, "--blocks", 20, "--fast", "--signal", "pulses",
             "--count-rate", 5000, "--seed", 4)

        def caught_up():
            listed = channels(arena)
            return all(k["cursor"] == listed[name]["blocks_written"]
                       for name in ("sig", "det") for k in listed[name]["consumers"]
                       if k["alive"] and k["kind"].startswith("shard"))
        wait_for(caught_up, "the shards to read every block")
        listed = channels(arena)
        spectra, pulse_blocks = listed["sig.psd"]["blocks_written"], listed["det.pulses"]["blocks_written"]
        assert spectra > 10 and pulse_blocks >= 20
        messages = read_topic(sent["bootstrap"], KINDS_TOPIC, spectra + pulse_blocks)
    finally:
        for p in [sender, *shards]:
            if p is not None:
                p.terminate()
                p.wait(timeout=30)
    assert len(messages) == spectra + pulse_blocks, f"{len(messages)} messages on {KINDS_TOPIC}"
    step = RATE / FFT_SIZE
    bins = FFT_SIZE // 2 + 1
    spectrum_seqs, pulse_ids, events = [], [], 0
    for m in messages:
        buf = bytearray(m.value())
        headers = dict(m.headers() or [])
        if m.key() == b"sig.psd":
            assert hs01["EventHistogram"].EventHistogramBufferHasIdentifier(buf, 0)
            h = hs01["EventHistogram"].GetRootAs(buf, 0)
            assert h.Source() == b"sig.psd"
            assert h.Timestamp() > 1_600_000_000 * 10**9
            assert h.CurrentShapeAsNumpy().tolist() == [bins]
            assert h.DimMetadataLength() == 1
            dim = h.DimMetadata(0)
            assert dim.Length() == bins and dim.Label() == b"frequency" and dim.Unit() == b"Hz"
            assert dim.BinBoundariesType() == hs01["Array"].ArrayDouble
            edges = hs01["ArrayDouble"]()
            edges.Init(dim.BinBoundaries().Bytes, dim.BinBoundaries().Pos)
            assert edges.ValueAsNumpy().tolist() == [(i - 0.5) * step for i in range(bins + 1)]
            assert h.DataType() == hs01["Array"].ArrayFloat
            data = hs01["ArrayFloat"]()
            data.Init(h.Data().Bytes, h.Data().Pos)
            psd = data.ValueAsNumpy()
            assert len(psd) == bins and psd.min() >= 0
            assert abs(int(psd.argmax()) - SINE_HZ / step) <= 1  # the sine's bin
            sequence, frame, frames = map(int, headers["weir.seq"].decode().split(":"))
            assert (frame, frames) == (0, 1)
            spectrum_seqs.append(sequence)
        else:
            assert m.key() == b"det.pulses"
            assert ev44["Event44Message"].Event44MessageBufferHasIdentifier(buf, 0)
            e = ev44["Event44Message"].GetRootAs(buf, 0)
            assert e.SourceName() == b"det.pulses"
            assert e.ReferenceTimeLength() == 1 and e.ReferenceTime(0) > 1_600_000_000 * 10**9
            assert e.ReferenceTimeIndexAsNumpy().tolist() == [0]
            assert e.TimeOfFlightLength() == e.PixelIdLength()
            if e.TimeOfFlightLength():
                tof = e.TimeOfFlightAsNumpy()
                assert tof.max() < 1_000_000  # within its 1 ms block (a pulse begun earlier may be negative)
            events += e.TimeOfFlightLength()
            assert "weir.gaps" not in headers
            pulse_ids.append(e.MessageId())
    assert sorted(spectrum_seqs) == list(range(spectra))
    assert sorted(pulse_ids) == list(range(pulse_blocks))
    assert events > 20  # 5000 pulses/s for 21 ms


def test_python_decodes_the_pl72_run_start_and_6s4t_run_stop(sent):
    pl72 = load_schema(sent["out"], "pl72_run_start", "RunStart")
    s6s4t = load_schema(sent["out"], "6s4t_run_stop", "RunStop")
    common = ["--brokers", sent["bootstrap"], "--topic", CONTROL_TOPIC, "--service-id", "fw1", "--run-name", "run 7"]
    job = weir("kafka", "run", "start", *common, "--job-id", "job-py-7", "--filename", "run_7.nxs",
               "--start-time", 1_700_000_000_000, "--metadata", '{"proposal": "p42"}', "--instrument", "bl5").strip()
    assert job == "job-py-7"
    weir("kafka", "run", "stop", *common, "--job-id", job, "--stop-time", 1_700_000_060_000, "--command-id", "cmd-1")
    messages = read_topic(sent["bootstrap"], CONTROL_TOPIC, 2)
    assert len(messages) == 2, f"{len(messages)} messages on {CONTROL_TOPIC}"
    start, stop = (bytearray(m.value()) for m in messages)
    assert pl72["RunStart"].RunStartBufferHasIdentifier(start, 0)
    r = pl72["RunStart"].GetRootAs(start, 0)
    assert (r.JobId(), r.RunName(), r.Filename(), r.ServiceId(), r.InstrumentName()) == (
        b"job-py-7", b"run 7", b"run_7.nxs", b"fw1", b"bl5")
    assert (r.StartTime(), r.StopTime()) == (1_700_000_000_000, 0)
    assert json.loads(r.Metadata()) == {"proposal": "p42"}
    assert s6s4t["RunStop"].RunStopBufferHasIdentifier(stop, 0)
    s = s6s4t["RunStop"].GetRootAs(stop, 0)
    assert (s.JobId(), s.RunName(), s.ServiceId(), s.CommandId()) == (b"job-py-7", b"run 7", b"fw1", b"cmd-1")
    assert s.StopTime() == 1_700_000_060_000
