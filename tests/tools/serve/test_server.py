"""weir serve over real loopback sockets against a live arena: the JSON API, /metrics (parsed, checked
by promtool, scraped by a real Prometheus), the security rules, and ten WebSocket clients of which one
never reads."""
import json
import math
import re
import shutil
import signal
import socket
import struct
import subprocess
import time
import urllib.parse

import pytest

from conftest import (SCRATCH, SPIKE_WRITER, WAIT_S, WEIR, processes, run_weir, scratch_dir, serve, start_sim,  # noqa: F401
                      wait_for, arena)

HEADER_BYTES = 56


def parse_metrics(text):
    """{(name, frozenset(labels)): value} and {family: type} from Prometheus text format 0.0.4."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)', line)
        assert match, f"not a sample line: {line!r}"
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        samples[(match.group(1), labels)] = float(match.group(4))
    return samples, types


def metric(samples, name, **labels):
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and want <= set(ls)]
    assert found, f"no sample {name} {labels}"
    return found[0]


def test_json_api_describes_channels_consumers_and_keys(arena, processes, serve):
    start_sim(processes, arena, "adc0", "adc1")
    run_weir("set", arena, "run.title", "cosmics")
    run_weir("set", arena, "adc0.gain", "2.5", "--type", "f64")
    server = serve(arena)
    info = server.json("/api/arena")
    assert info["name"] == arena and info["writable"] is False
    channels = {c["name"]: c for c in server.json("/api/channels")["channels"]}
    assert set(channels) == {"adc0", "adc1"}
    adc0 = channels["adc0"]
    assert adc0["rate_hz"] == 1e6 and adc0["dtype"] == "f32" and adc0["samples_per_block"] == 4096
    assert adc0["writer_alive"] and adc0["frame"] is None and adc0["pyramid_reach_samples"] > 0
    first = adc0["blocks_written"]
    later = wait_for(lambda: (c := server.json("/api/channels")["channels"][0])["blocks_written"] > first and c,
                     "blocks written to grow")
    assert later["blocks_per_s"] > 0
    keys = {k["key"]: k for k in server.json("/api/keys")["keys"]}
    assert keys["run.title"]["value"] == "cosmics" and keys["adc0.gain"]["value"] == 2.5
    assert keys["adc0.gain"]["type"] == "f64"
    assert server.json("/api/key?name=run.title")["value"] == "cosmics"
    status, _, body = server.request("/api/key?name=nope")
    assert status == 404 and b"nope" in body
    # A shard's consumer row shows with its reads, lag, losses and processing time.
    processes(WEIR, "shard", arena, "stats", "--input", "adc0", "-p", "window=4096")
    consumers = wait_for(lambda: [k for c in server.json("/api/channels")["channels"] for k in c["consumers"]
                                  if k["blocks_read"] > 0 and k["proc_p50_ns"] > 0], "a shard's consumer row")
    assert consumers[0]["kind"] == "shard:stats" and consumers[0]["policy"] == "lossy"
    assert {"blocks_lost", "lag_blocks", "errors", "proc_p99_ns"} <= set(consumers[0])
    samples, _ = parse_metrics(server.request("/metrics")[2].decode())
    assert metric(samples, "weir_stage_duration_p50_seconds", stage="shard:stats") > 0
    assert metric(samples, "weir_consumer_blocks_read_total", channel="adc0", kind="shard:stats") > 0


def test_metrics_parse_and_pass_promtool(arena, processes, serve):
    start_sim(processes, arena, "adc0")
    server = serve(arena, "--disk", str(SCRATCH))
    scratch_dir("")
    status, headers, body = server.request("/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples, types = parse_metrics(body.decode())
    assert metric(samples, "weir_channel_blocks_written_total", channel="adc0") > 0
    assert metric(samples, "weir_channel_samples_written_total", channel="adc0") > 0
    assert metric(samples, "weir_arena_channel_pool_bytes") > 0
    assert metric(samples, "weir_disk_free_bytes", path=str(SCRATCH)) > 0
    assert types["weir_channel_blocks_written_total"] == "counter"
    assert types["weir_stage_duration_p50_seconds"] == "gauge"
    for name, kind in types.items():
        assert (kind == "counter") == name.endswith("_total"), name
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: prometheus); the metrics parsed but were not linted")
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_real_prometheus_scrapes_weir_serve(arena, processes, serve, tmp_path):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus is not installed (Debian: prometheus)")
    start_sim(processes, arena, "adc0")
    server = serve(arena)
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(f"""global:
  scrape_interval: 1s
scrape_configs:
  - job_name: weir
    static_configs:
      - targets: ['127.0.0.1:{server.port}']
""")
    processes(prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
              f"--web.listen-address=127.0.0.1:{port}")
    import http.client

    def query():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            q = urllib.parse.quote('weir_channel_blocks_written_total{channel="adc0"}')
            conn.request("GET", f"/api/v1/query?query={q}")
            answer = json.loads(conn.getresponse().read())
            result = answer["data"]["result"]
            return result and float(result[0]["value"][1]) > 0 and result
        except (OSError, ValueError, KeyError):
            return None

    result = wait_for(query, "Prometheus to scrape a blocks-written counter > 0", timeout=60, interval=0.5)
    assert result[0]["metric"]["job"] == "weir"


def test_binding_off_loopback_without_a_token_is_refused(arena):
    result = subprocess.run([WEIR, "serve", arena, "--bind", "0.0.0.0", "--port", "0"], capture_output=True, text=True,
                            timeout=WAIT_S)
    assert result.returncode == 2
    assert "without a token" in result.stderr and "0.0.0.0" in result.stderr


def test_a_token_is_required_on_http_and_websocket_when_given(arena, serve, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    server = serve(arena, "--token-file", token_file)
    assert server.request("/api/arena")[0] == 401
    assert server.request("/metrics")[0] == 401
    assert server.request("/api/arena?token=wrong")[0] == 401
    assert server.request("/api/arena?token=s3cret-token")[0] == 200
    assert server.request("/metrics", headers={"Authorization": "Bearer s3cret-token"})[0] == 200
    status, headers, _ = server.request("/?token=s3cret-token")
    assert status == 200 and "weir_token=s3cret-token" in headers.get("Set-Cookie", "")
    assert "HttpOnly" in headers["Set-Cookie"]
    assert server.request("/api/arena", headers={"Cookie": "weir_token=s3cret-token"})[0] == 200
    import websocket
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=5)
    ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws?token=s3cret-token", timeout=5)
    ws.close()


def test_keys_are_read_only_unless_allow_set_and_pages_carry_a_csp(arena, serve):
    body = json.dumps({"key": "setpoint", "value": "1.25", "type": "f64"})
    headers = {"Content-Type": "application/json"}
    server = serve(arena)
    status, _, text = server.request("/api/set", method="POST", body=body, headers=headers)
    assert status == 403 and b"--allow-set" in text
    status, page_headers, page = server.request("/")
    assert status == 200 and b"app.js" in page
    csp = page_headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    writable = serve(arena, "--allow-set")
    assert writable.request("/api/set", method="POST", body=body, headers=headers)[0] == 200
    assert run_weir("get", arena, "setpoint").stdout.strip() == "1.25"
    status, _, text = writable.request("/api/set", method="POST", body=body,
                                       headers={**headers, "Origin": "http://evil.example"})
    assert status == 403


def read_frame_header(data):
    magic, kind, flags, channel, n = struct.unpack_from("<IHHII", data, 0)
    assert magic == 0x52494557
    return kind, flags, channel, n


def test_ten_websocket_clients_one_never_reading(arena, processes, serve):
    import websocket
    start_sim(processes, arena, *[f"adc{i}" for i in range(2)])
    server = serve(arena)
    view = json.dumps({"views": [{"channel": 0, "kind": "envelope", "span": 1 << 22, "columns": 4096},
                                 {"channel": 1, "kind": "envelope", "span": 4096, "columns": 1024}]})
    stuck = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=5,
                                        sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),))
    stuck.send(view)  # and never reads again
    readers = []
    for _ in range(9):
        ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=5)
        ws.send(view)
        readers.append(ws)

    def read_for(seconds):
        counts = [0] * len(readers)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for i, ws in enumerate(readers):
                data = ws.recv()
                kind, _, channel, n = read_frame_header(data)
                assert kind == 1 and channel in (0, 1) and len(data) == HEADER_BYTES + 8 * n
                counts[i] += 1
        return counts

    read_for(3)  # warm up: buffers and the history fill
    rss_before = server.rss_kib()
    counts = read_for(8)
    rss_after = server.rss_kib()
    assert min(counts) > 0, counts
    assert max(counts) - min(counts) <= max(counts) // 2, f"readers fell behind one another: {counts}"
    samples, _ = parse_metrics(server.request("/metrics")[2].decode())
    assert metric(samples, "weir_serve_websocket_clients") == 10
    assert metric(samples, "weir_serve_frames_replaced_total") > 0, "the stuck client's frames were never replaced"
    assert metric(samples, "weir_serve_frames_encoded_total") < metric(samples, "weir_serve_frames_sent_total")
    assert rss_after - rss_before < 8 * 1024, f"server RSS grew {rss_before} -> {rss_after} KiB"
    for ws in readers:
        ws.close()
    stuck.close()


def test_a_request_whose_host_is_not_this_server_is_refused_on_every_path(arena, serve):
    """DNS rebinding: a page on evil.example whose name now points at 127.0.0.1 sends Host: evil.example."""
    run_weir("set", arena, "setpoint", "1.25", "--type", "f64")
    server = serve(arena, "--allow-set", "--allow-host", "daq-gw.lab")
    evil = {"Host": f"evil.example:{server.port}"}
    for path in ("/", "/api/arena", "/api/keys", "/metrics", "/ws"):
        status, _, text = server.request(path, headers=evil)
        assert status == 421 and b"evil.example" in text and b"--allow-host" in text, (path, status, text)
    body = json.dumps({"key": "setpoint", "value": "7.5", "type": "f64"})
    status, _, _ = server.request("/api/set", method="POST", body=body,
                                  headers={**evil, "Content-Type": "application/json",
                                           "Origin": f"http://evil.example:{server.port}"})
    assert status == 421
    assert run_weir("get", arena, "setpoint").stdout.strip() == "1.25"
    import websocket
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=5, host=f"evil.example:{server.port}")
    # The names of this server pass: loopback addresses, localhost, names given with --allow-host.
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "LOCALHOST", f"[::1]:{server.port}",
                 "daq-gw.lab", f"DAQ-GW.lab:{server.port}"):
        assert server.request("/api/arena", headers={"Host": host})[0] == 200, host
    for host in ("10.1.2.3", "evil.example.", "127.0.0.1.evil.example", "[::1"):
        assert server.request("/api/arena", headers={"Host": host})[0] == 421, host
    ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=5)
    ws.close()


def test_api_set_keeps_each_key_type_and_refuses_what_does_not_parse_as_it(arena, serve):
    run_weir("set", arena, "gain", "1.5", "--type", "f64")
    run_weir("set", arena, "count", "3", "--type", "i64")
    run_weir("set", arena, "title", "cosmics")
    server = serve(arena, "--allow-set")

    def post(**fields):
        status, _, text = server.request("/api/set", method="POST", body=json.dumps(fields),
                                         headers={"Content-Type": "application/json"})
        return status, text.decode()

    def held(key):
        out = json.loads(run_weir("get", arena, key, "--json").stdout)
        return out["type"], out["value"]

    assert post(key="gain", value=2.5)[0] == 200 and held("gain") == ("f64", 2.5)
    assert post(key="gain", value="3.25")[0] == 200 and held("gain") == ("f64", 3.25)
    assert post(key="count", value=7)[0] == 200 and held("count") == ("i64", 7)
    assert post(key="title", value="muons")[0] == 200 and held("title") == ("text", "muons")
    # Refused, with the reason, and the key left as it was.
    for fields, reason in ((dict(key="gain", value="fast"), "holds f64"),
                           (dict(key="gain", value=""), "holds f64"),
                           (dict(key="count", value=2.5), "holds i64"),
                           (dict(key="count", value="7", type="text"), "keeps its type"),
                           (dict(key="gain", value=True), "number or a string")):
        status, text = post(**fields)
        assert status == 400 and reason in text, (fields, status, text)
    assert held("gain") == ("f64", 3.25) and held("count") == ("i64", 7)
    # A new key takes the type asked, else its value's.
    assert post(key="new.f", value=0.5)[0] == 200 and held("new.f") == ("f64", 0.5)
    assert post(key="new.i", value=-4)[0] == 200 and held("new.i") == ("i64", -4)
    assert post(key="new.u", value=2 ** 64 - 1)[0] == 200 and held("new.u") == ("u64", 2 ** 64 - 1)
    assert post(key="new.t", value="x")[0] == 200 and held("new.t") == ("text", "x")
    assert post(key="new.typed", value="12", type="u64")[0] == 200 and held("new.typed") == ("u64", 12)


# ---- envelope frames: columns at every span, long spans, gaps ------------------------------------

def decode_frame(data):
    """The 56-byte header and the columns of an envelope frame, as a dict."""
    magic, kind, flags, channel, n, first, step, anchor, newest_ns, span = struct.unpack_from("<IHHIIdddQQ", data, 0)
    assert magic == 0x52494557 and len(data) == HEADER_BYTES + (8 * n if kind == 1 else 4 * n)
    values = struct.unpack_from(f"<{2 * n}f", data, HEADER_BYTES) if kind == 1 else ()
    return dict(kind=kind, flags=flags, channel=channel, n=n, first=first, step=step, anchor=anchor, span=span,
                mins=values[:n], maxs=values[n:])


def frames_for(port, views, batches=2):
    """The frames a fresh WebSocket gets for `views` (at most 16), in view order, from its `batches`-th
    batch: every frame of one tick comes in the order of the views asked."""
    import websocket
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=10)
    try:
        ws.send(json.dumps({"views": views}))
        for _ in range(batches):
            frames = [decode_frame(ws.recv()) for _ in views]
        return frames
    finally:
        ws.close()


def envelope_sweep(port, channels, columns, spans_s):
    """{(channel index, span in seconds): frame} for live views of every span, 16 views a connection."""
    views = [(c, rate, s) for c, rate in channels for s in spans_s]
    out = {}
    for at in range(0, len(views), 16):
        chunk = views[at:at + 16]
        asked = [{"channel": c, "kind": "envelope", "span": max(2, round(s * rate)), "columns": columns}
                 for c, rate, s in chunk]
        for (c, _, s), frame in zip(chunk, frames_for(port, asked)):
            assert frame["channel"] == c
            out[(c, s)] = frame
    return out


SWEEP_SPANS_S = [1e-3 * 1.25 ** k for k in range(int(math.log(3600e3) / math.log(1.25)) + 2)]


def test_columns_stay_within_half_of_those_asked_at_every_span(arena, processes, serve):
    """Zoom from 1 ms to 1 h on a 100 kHz and a 1 MS/s channel: the columns returned never fall below
    half of those asked (or of the samples covered), the bucket times never pass the newest sample,
    and a span longer than the history starts at its oldest sample."""
    processes(WEIR, "sim", arena, "slow", "--rate", "1e5", "--block", "4096", "--signal", "sine")
    processes(WEIR, "sim", arena, "fast", "--rate", "1e6", "--block", "4096", "--signal", "sine")
    wait_for(lambda: len(json.loads(run_weir("ls", arena, "--json").stdout)["channels"]) == 2, "both channels")
    server = serve(arena)
    index = {c["name"]: c["index"] for c in server.json("/api/channels")["channels"]}
    channels = [(index["slow"], 1e5), (index["fast"], 1e6)]
    import websocket
    keep = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=10)  # the feeds start now
    keep.send(json.dumps({"views": [{"channel": c, "span": 4096} for c, _ in channels]}))
    time.sleep(3)  # a few seconds of history: 300 k samples at 100 kHz, 3 M at 1 MS/s
    columns = 1000
    frames = envelope_sweep(server.port, channels, columns, SWEEP_SPANS_S)
    keep.close()
    bad = []
    for (c, s), f in sorted(frames.items()):
        rate = dict(channels)[c]
        asked = max(2, round(s * rate))
        covered = f["n"] * f["step"]
        want = min(columns, int(covered))
        if not (want / 2 <= f["n"] <= columns):
            bad.append((c, s, asked, f["n"], f["span"]))
        assert f["first"] + f["n"] * f["step"] <= f["anchor"], (c, s, f)  # never in the future
        assert abs(f["span"] - covered) <= 1e-6 * covered + 1, (c, s, f)
        if asked <= f["anchor"]:  # the history holds the whole span: all of it is shown
            assert asked <= f["span"] < asked + 262144, (c, s, asked, f)  # from the start of its first entry
        else:  # longer than the history: from its oldest sample on, and the span says what is covered
            assert f["first"] == 0 and f["span"] == f["anchor"], (c, s, asked, f)
        assert f["flags"] & 4 == 0, (c, s, "a gap in a sine written without one", f)
    assert not bad, f"columns outside [{columns}/2, {columns}] at (channel, span s, samples, columns, covered): {bad}"


def test_a_gap_block_is_a_nan_bucket_exactly_where_it_sits_and_flagged(arena, processes, serve):
    """A writer publishes 20 blocks, a gap block (skip), 20 more. The stream goes on at the same sample
    index after a gap, so the bucket holding the gap's place is NaN in min and max (the trace breaks
    there), at raw zoom and from the pyramid alike, and the frame says so; a view without it is whole."""
    blocks, gap_after, spike_at = 40, 20, 100000
    gap = gap_after * 4096
    writer = processes(SPIKE_WRITER, arena, "spk", blocks, spike_at, 5.0, gap_after, stdout=subprocess.PIPE,
                       stdin=subprocess.PIPE)
    assert writer.stdout.readline().split() == ["done", str(blocks * 4096)]
    total = blocks * 4096
    server = serve(arena)
    views = [{"channel": 0, "span": 4096, "offset": total - gap - 2048, "columns": 1000},  # raw samples
             {"channel": 0, "span": total, "columns": 1000},                             # the pyramid
             {"channel": 0, "span": 4096, "columns": 1000},                              # newest, no gap
             {"channel": 0, "span": 4096, "offset": total - 30000, "columns": 1000}]     # older, no gap
    frames = frames_for(server.port, views)
    for view, f in zip(views, frames):
        nan = [i for i, (lo, hi) in enumerate(zip(f["mins"], f["maxs"])) if math.isnan(lo) or math.isnan(hi)]
        assert all(math.isnan(f["mins"][i]) and math.isnan(f["maxs"][i]) for i in nan), (view, nan)
        if f["first"] < gap < f["first"] + f["span"]:
            assert nan == [int((gap - f["first"]) / f["step"])], (view, nan, f["first"], f["step"])
            assert f["flags"] & 4, view
        else:
            assert nan == [] and f["flags"] & 4 == 0, (view, nan)
    assert frames[0]["flags"] & 2 and frames[0]["n"] == 1000  # drawn from raw samples, every column
    assert frames[1]["first"] == 0 and frames[1]["n"] == 1000 and max(frames[1]["maxs"]) == 5.0  # spike kept
    writer.stdin.close()


def test_a_stopped_writer_turns_stale_and_its_rate_decays_and_both_come_back(arena, processes, serve):
    """Rates and ages come from the blocks' own stamps: right at the first request, and a writer
    stopped with SIGSTOP shows as stale within the timeout while its rate falls; SIGCONT brings it back."""
    rate, block = 1e5, 4096
    sim = start_sim(processes, arena, "adc0", rate=str(rate))
    wait_for(lambda: json.loads(run_weir("ls", arena, "--json").stdout)["channels"][0]["blocks_written"] >= 40,
             "40 blocks written")
    first = serve(arena, "--stale-after", "0.5").json("/api/channels")["channels"][0]  # a fresh server's first answer
    assert abs(first["samples_per_s"] - rate) <= 0.05 * rate, first
    assert abs(first["blocks_per_s"] - rate / block) <= 0.05 * rate / block, first
    assert first["stale"] is False and 0 <= first["newest_block_age_s"] < 0.5 and first["stale_after_s"] == 0.5
    assert first["samples_written"] >= 40 * block
    server = serve(arena, "--stale-after", "0.5")
    default = serve(arena).json("/api/channels")["channels"][0]
    assert default["stale_after_s"] == 2 and default["stale"] is False  # max(2 s, 4 x 41 ms)

    def channel():
        return server.json("/api/channels")["channels"][0]

    sim.send_signal(signal.SIGSTOP)
    try:
        stopped = time.monotonic()
        stale = wait_for(lambda: (c := channel())["stale"] and c, "the stopped writer to turn stale", timeout=5)
        assert 0.4 <= time.monotonic() - stopped and stale["newest_block_age_s"] > 0.5
        decayed = wait_for(lambda: (c := channel())["samples_per_s"] < rate / 2 and c, "the rate to decay", timeout=10)
        assert decayed["stale"] and decayed["newest_block_age_s"] > 1
    finally:
        sim.send_signal(signal.SIGCONT)
    back = wait_for(lambda: not (c := channel())["stale"] and c["samples_per_s"] > rate / 2 and c,
                    "the writer to come back", timeout=10)
    assert back["newest_block_age_s"] < 0.5


def test_a_view_by_name_follows_its_channel_into_a_recreated_arena(arena, processes, serve):
    """The arena is removed and created again under its name with the channels in the other order; a
    WebSocket view that names det0 goes on showing det0 (amplitude 1, not det1's 5) at its new index."""
    import websocket

    def start(name, amplitude):
        proc = processes(WEIR, "sim", arena, name, "--rate", "1e6", "--block", "4096", "--amplitude", amplitude)
        wait_for(lambda: name in {c["name"] for c in json.loads(run_weir("ls", arena, "--json").stdout)["channels"]},
                 f"the sim's {name}")
        return proc

    sims = [start("det0", 1), start("det1", 5)]
    server = serve(arena)
    ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws", timeout=10)
    ws.send(json.dumps({"views": [{"name": "det0", "span": 4096, "columns": 256},
                                  {"name": "nope", "span": 4096, "columns": 256}]}))  # no such channel: no frames
    before = decode_frame(ws.recv())
    assert before["channel"] == 0 and 0.9 < max(before["maxs"]) <= 1.001, before["channel"]
    for proc in sims:
        proc.terminate()
        proc.wait(timeout=WAIT_S)
    run_weir("rm", arena, "--force")
    run_weir("create", arena)
    start("det1", 5)
    start("det0", 1)
    after = wait_for(lambda: (f := decode_frame(ws.recv()))["channel"] == 1 and f, "frames of det0 at its new index")
    assert {c["name"]: c["index"] for c in server.json("/api/channels")["channels"]} == {"det1": 0, "det0": 1}
    for _ in range(10):
        f = decode_frame(ws.recv())
        assert f["channel"] == 1 and 0.9 < max(f["maxs"]) <= 1.001, (f["channel"], max(f["maxs"]))
    assert 0.9 < max(after["maxs"]) <= 1.001
    ws.close()


def test_api_mca_gives_the_pulses_outside_the_range_apart_from_its_counts(arena, processes, serve):
    """An MCA whose range (1.0) cuts off the simulator's 1.173 and 1.332 lines: those pulses are its
    overflow, never in a bin, and the bins plus underflow plus overflow make up the accepted pulses."""
    start_sim(processes, arena, "det", signal="pulses", extra=("--count-rate", "5000"))
    processes(WEIR, "shard", arena, "mca", "--input", "det", "-p", "range=1.0", "-p", "bins=256",
              "-p", "publish=0.05")
    server = serve(arena)

    def consistent():
        entries = server.json("/api/mca")["mca"]
        if not entries:
            return None
        m = entries[0]
        total = sum(m["counts"]) + m["underflow"] + m["overflow"]
        return m["accepted"] > 200 and total == m["accepted"] and m  # one publish read whole

    m = wait_for(consistent, "an MCA spectrum whose bins and out-of-range pulses add up", timeout=WAIT_S)
    assert m["name"] == "det" and len(m["counts"]) == 256
    assert m["overflow"] > 0.1 * m["accepted"], m["overflow"]  # the two lines above 1.0
    assert m["underflow"] <= 0.02 * m["accepted"]
    out_of_range = float(run_weir("get", arena, "det.out_of_range").stdout)
    assert out_of_range >= m["underflow"] + m["overflow"]  # read later: at least as many


def test_a_one_sample_spike_is_in_every_frame_that_covers_it(arena, processes, serve):
    """A spike in the newest block is the max of every frame that covers it, at every span and from
    every source; frames panned back to where only the pyramid holds the data (the feed copies the
    newer half of the ring) do not show it."""
    blocks = 60
    total = blocks * 4096
    writer = processes(SPIKE_WRITER, arena, "spk", blocks, total - 5, 5.0, stdout=subprocess.PIPE,
                       stdin=subprocess.PIPE)
    assert writer.stdout.readline().split() == ["done", str(total)]
    server = serve(arena)
    spans = (10, 100, 1000, 4096, 65536, total, 1 << 20, 1 << 26)
    views = [{"channel": 0, "span": s, "columns": 1000} for s in spans]
    views += [{"channel": 0, "span": s, "offset": total - 2000, "columns": 1000} for s in (4096, 65536)]  # panned
    for view, f in zip(views, frames_for(server.port, views)):
        if "offset" not in view:  # live: the raw history holds the newest samples
            assert f["n"] >= min(1000, f["span"]) / 2, (view, f["n"])
        end = f["first"] + f["n"] * f["step"]
        if f["first"] <= total - 5 < end:
            assert max(f["maxs"]) == 5.0, (view, max(f["maxs"]))
        else:
            assert max(f["maxs"]) == 0.0, (view, max(f["maxs"]))
    writer.stdin.close()
