"""The page of weir serve in headless Chromium (Debian's chromium and chromium-driver, driven by
python3-selenium): it loads with no console error, a one-sample spike stays in the drawn envelope at
every zoom level, and the spectrum view puts a sine's peak in the right bin. Screenshots are kept
under the test's scratch dir (build/tests/tools/serve/scratch/page)."""
import shutil
import subprocess
import time

import pytest

from conftest import (SPIKE_WRITER, WAIT_S, WEIR, arena, processes, scratch_dir, serve, start_sim,  # noqa: F401
                      wait_for)

SPIKE = 5.0
BLOCKS = 40
SAMPLES = BLOCKS * 4096
SPIKE_AT = SAMPLES - 5  # in the newest block, 5 samples before the end: inside even the 10 µs view


@pytest.fixture
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("python3-selenium is not installed")
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1600,1000"):
        options.add_argument(arg)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
    except Exception as e:  # no namespaces, no display: say why, loudly
        pytest.skip(f"headless Chromium does not start here: {e}")
    yield driver
    driver.quit()


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def load(driver, server, channel):
    driver.get(server.url)
    wait_for(lambda: channel in (driver.execute_script("return window.weirDebug && weirDebug.channels()") or []),
             f"the page to list {channel}")


def test_a_one_sample_spike_is_visible_at_every_zoom(arena, processes, serve, browser):
    writer = processes(SPIKE_WRITER, arena, "spk", BLOCKS, SPIKE_AT, SPIKE, stdout=subprocess.PIPE,
                       stdin=subprocess.PIPE)
    assert writer.stdout.readline().split() == ["done", str(SAMPLES)]
    server = serve(arena)
    shots = scratch_dir("page")
    load(browser, server, "spk")
    browser.execute_script("weirDebug.open('spk')")
    for span in (10, 100, 1000, 4096, 65536, SAMPLES, 1 << 20, 1 << 26):
        shown = browser.execute_script(f"return weirDebug.setSpan('spk', {span})")
        frame = wait_for(lambda: (f := browser.execute_script("return weirDebug.frame('spk')")) and f["span"] == shown
                         and browser.execute_script("return weirDebug.drawn") > 0 and f, f"a frame of span {shown}")
        assert frame["max"] == SPIKE, f"span {shown} samples: the envelope's max is {frame['max']}, not the spike"
        assert frame["first"] <= SPIKE_AT < frame["first"] + frame["n"] * frame["step"]
        time.sleep(0.1)  # let the frame reach the canvas before the screenshot
        browser.save_screenshot(str(shots / f"spike_span_{shown}.png"))
    assert console_errors(browser) == []
    assert browser.execute_script("return weirDebug.errors") == []
    writer.stdin.close()


def test_the_spectrum_view_shows_a_sines_peak_in_its_bin(arena, processes, serve, browser):
    rate, size, bin_wanted = 1e6, 4096, 41
    frequency = bin_wanted * rate / size  # on a bin centre: 10009.77 Hz
    start_sim(processes, arena, "sig", extra=("--frequency", str(frequency)))
    processes(WEIR, "shard", arena, "fft", "--input", "sig", "-p", f"size={size}", "-p", "window=hann",
              "-p", "spectrum=psd")
    server = serve(arena)
    load(browser, server, "sig.psd")
    browser.execute_script("weirDebug.open('sig.psd')")
    frame = wait_for(lambda: (f := browser.execute_script("return weirDebug.frame('sig.psd')")) and f["peak"] and f,
                     "a drawn spectrum")
    values = frame["values"]
    assert len(values) == size // 2 + 1
    assert max(range(len(values)), key=values.__getitem__) == bin_wanted
    assert frame["peak"]["bin"] == bin_wanted
    assert abs(frame["peak"]["x"] - frequency) < rate / size / 2
    browser.save_screenshot(str(scratch_dir("page") / "spectrum.png"))
    assert console_errors(browser) == []
