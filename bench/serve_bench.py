#!/usr/bin/python3
"""weir serve figures: frames per second per WebSocket client and server CPU per client with 8
simulated 1 MS/s channels, and the time from a block published to a frame holding it received
(p50/p99); with headless Chromium, also from a frame received to the page having drawn it.

    bench/serve_bench.py [--weir build/tools/weir] [--seconds 5] [--clients 1,4,8]
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

CHANNELS = 8


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client(port, seconds, out):
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=5)
    views = [{"channel": i, "kind": "envelope", "span": 1 << 20, "columns": 1000} for i in range(CHANNELS)]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weir", default="build/tools/weir")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,4,8")
    args = ap.parse_args()
    arena = f"servebench{os.getpid()}"
    subprocess.run([args.weir, "create", arena, "--channels", "16"], check=True, capture_output=True)
    sim = subprocess.Popen([args.weir, "sim", arena, *[f"adc{i}" for i in range(CHANNELS)], "--rate", "1e6",
                            "--block", "4096", "--signal", "sine"], stdout=subprocess.DEVNULL)
    serve = subprocess.Popen([args.weir, "serve", arena, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+)/", serve.stdout.readline()).group(1))
        time.sleep(1)
        print(f"weir serve, {CHANNELS} channels x 1 MS/s (weir sim), 30 frames/s per view, 8 views per client "
              f"(span 2^20 samples, 1000 columns), {args.seconds:g} s per row")
        print(f"{'clients':>8} {'frames/s/client':>16} {'server CPU %':>13} {'CPU %/client':>13} "
              f"{'latency p50 ms':>15} {'p99 ms':>8}")
        for n in map(int, args.clients.split(",")):
            results = []
            threads = [threading.Thread(target=client, args=(port, args.seconds, results)) for _ in range(n)]
            c0, t0 = cpu_s(serve.pid), time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            cpu = 100 * (cpu_s(serve.pid) - c0) / (time.monotonic() - t0)
            fps = sum(r[0] for r in results) / len(results)
            lat = [x for r in results for x in r[1]]
            print(f"{n:>8} {fps:>16.1f} {cpu:>13.1f} {cpu / n:>13.2f} {percentile(lat, 0.5):>15.1f} "
                  f"{percentile(lat, 0.99):>8.1f}")
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
