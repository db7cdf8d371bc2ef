#!/usr/bin/python3
"""weir serve figures: frames per second per WebSocket client, server CPU (from /proc/PID/stat over
the row) and RSS, with simulated 1 MS/s channels, and the time from a block published to a frame
holding it received (p50/p99); with headless Chromium, also from a frame received to the page having
drawn it. --runs N repeats each row N times and prints the medians.

    bench/serve_bench.py [--weir build/tools/weir] [--seconds 5] [--clients 1,4,8]
    bench/serve_bench.py --channels 1 --views 1 --clients 50 --seconds 10 --runs 3 [--distinct] --no-browser

--views V: views per client (channels 0..V-1, cycling); --distinct: every client asks a view of its
own (client i: span 2^(14 + i mod 8) samples, 1000 - i columns), so no frame is shared between
clients as identical views' frames are.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import threading
import time

import websocket

import statistics


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    status = open(f"/proc/{pid}/status").read()
    return {k: int(re.search(rf"{k}:\s+(\d+) kB", status).group(1)) for k in ("VmRSS", "VmHWM")}


def client(port, seconds, out, views):
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=5)
    ws.send(json.dumps({"views": views}))
    frames, latency = 0, []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = ws.recv()
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        newest = struct.unpack_from("<Q", data, 40)[0]
        frames += 1
        if newest:
            latency.append((now - newest) / 1e6)
    ws.close()
    out.append((frames / seconds, latency))


def browser_latency(port, seconds):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
            options.add_argument(arg)
        options.binary_location = shutil.which("chromium")
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    except Exception as e:  # noqa: BLE001 - any reason the browser cannot run is reported
        return f"skipped: {e}"
    try:
        driver.get(f"http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "adc0" not in (driver.execute_script(
                "return window.weirDebug && weirDebug.channels()") or []):
            time.sleep(0.1)
        driver.execute_script("weirDebug.open('adc0', {span: 1 << 20})")
        time.sleep(seconds)
        ms = driver.execute_script("return weirDebug.drawLatencyMs")
        return ms
    finally:
        driver.quit()


def client_views(args, index):
    span, columns = (1 << (14 + index % 8), 1000 - index) if args.distinct else (1 << 20, 1000)
    return [{"channel": v % args.channels, "kind": "envelope", "span": span, "columns": columns}
            for v in range(args.views)]


def row(args, port, pid, n):
    """One row: n clients for args.seconds; (frames/s per client, CPU % of a core, latencies, RSS KiB)."""
    results = []
    threads = [threading.Thread(target=client, args=(port, args.seconds, results, client_views(args, i)))
               for i in range(n)]
    c0, t0 = cpu_s(pid), time.monotonic()
    for t in threads:
        t.start()
    rss = rss_kib(pid)  # while every client is connected
    for t in threads:
        t.join()
    cpu = 100 * (cpu_s(pid) - c0) / (time.monotonic() - t0)
    end = rss_kib(pid)
    rss = {"VmRSS": max(rss["VmRSS"], end["VmRSS"]), "VmHWM": end["VmHWM"]}
    fps = sum(r[0] for r in results) / len(results)
    return fps, cpu, [x for r in results for x in r[1]], rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weir", default="build/tools/weir")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,4,8")
    ap.add_argument("--channels", type=int, default=8, help="simulated 1 MS/s channels")
    ap.add_argument("--views", type=int, default=8, help="views per client")
    ap.add_argument("--distinct", action="store_true", help="a span of its own per client (no shared views)")
    ap.add_argument("--runs", type=int, default=1, help="repeat each row; medians are printed")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    arena = f"servebench{os.getpid()}"
    subprocess.run([args.weir, "create", arena, "--channels", "16"], check=True, capture_output=True)
    sim = subprocess.Popen([args.weir, "sim", arena, *[f"adc{i}" for i in range(args.channels)], "--rate", "1e6",
                            "--block", "4096", "--signal", "sine"], stdout=subprocess.DEVNULL)
    serve = subprocess.Popen([args.weir, "serve", arena, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+)/", serve.stdout.readline()).group(1))
        time.sleep(1)
        shape = ("a view of its own per client: spans 2^14..2^21 samples, 1000 - i columns" if args.distinct
                 else "span 2^20 samples, 1000 columns")
        print(f"weir serve, {args.channels} channels x 1 MS/s (weir sim), 30 frames/s per view, {args.views} views "
              f"per client ({shape}), {args.seconds:g} s per row, median of {args.runs} run(s)")
        print(f"{'clients':>8} {'frames/s/client':>16} {'server CPU %':>13} {'CPU %/client':>13} "
              f"{'latency p50 ms':>15} {'p99 ms':>8} {'RSS MiB':>8} {'peak MiB':>9}  runs: CPU %")
        for n in map(int, args.clients.split(",")):
            runs = [row(args, port, serve.pid, n) for _ in range(args.runs)]
            med = statistics.median
            fps, cpu = med(r[0] for r in runs), med(r[1] for r in runs)
            p50 = med(percentile(r[2], 0.5) for r in runs)
            p99 = med(percentile(r[2], 0.99) for r in runs)
            rss, hwm = med(r[3]["VmRSS"] for r in runs) / 1024, med(r[3]["VmHWM"] for r in runs) / 1024
            each = " ".join(f"{r[1]:.1f}" for r in runs)
            print(f"{n:>8} {fps:>16.1f} {cpu:>13.1f} {cpu / n:>13.2f} {p50:>15.1f} {p99:>8.1f} {rss:>8.1f} "
                  f"{hwm:>9.1f}  {each}")
        if args.no_browser:
            return
        drawn = browser_latency(port, args.seconds)
        if isinstance(drawn, str):
            print(f"page: {drawn}")
        else:
            print(f"page (headless Chromium, 1 scope): frame received -> drawn p50 {percentile(drawn, 0.5):.1f} ms, "
                  f"p99 {percentile(drawn, 0.99):.1f} ms over {len(drawn)} frames")
    finally:
        serve.terminate()
        sim.terminate()
        serve.wait()
        sim.wait()
        subprocess.run([args.weir, "rm", arena, "--force"], capture_output=True)


if __name__ == "__main__":
    main()
