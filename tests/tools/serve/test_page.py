"""The page of weir serve in headless Chromium (Debian's chromium and chromium-driver, driven by
python3-selenium): it loads with no console error, a one-sample spike stays in the drawn envelope at
every zoom level (and Y hold keeps its range), a sine's amplitude and frequency read back from two
cursors clicked on its peaks, the axes carry ticks in seconds and volts (10 x 8 divisions, a fixed
range, a trigger), integer keys show every digit, a stopped writer is marked stale and a gap drawn as
one, views kept in the URL find their channels by name after the arena is recreated with them
reordered (the same server re-attaching, or a fresh one), the spectrum view names its dB reference
on a log-frequency grid, and the MCA panel labels energy and counts and shows out-of-range pulses
apart. Screenshots are kept under the test's scratch dir (build/tests/tools/serve/scratch/page)."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (SPIKE_WRITER, WAIT_S, WEIR, arena, processes, run_weir, scratch_dir, serve,  # noqa: F401
                      start_sim, wait_for)

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


def load(driver, server, channel, hash_part=""):
    driver.get(server.url + hash_part)
    wait_for(lambda: channel in (driver.execute_script("return window.weirDebug && weirDebug.channels()") or []),
             f"the page to list {channel}")


def js(driver, script):
    return driver.execute_script("return " + script)


def fresh_frame(driver, name, asked, extra="true"):
    """The newest frame of `name`'s view once it is one of `asked` samples (and `extra`, a JS test of f)."""
    return wait_for(lambda: js(driver, f"(f => f && f.asked === {asked} && ({extra}) && f)(weirDebug.frame('{name}'))"),
                    f"a frame of {asked} samples for {name}")


def reading(driver, name, which):
    """A cursor readout of a view from the DOM: (its number, its text)."""
    node = driver.find_element("css selector", f".view[data-name='{name}'] .reading.{which} .value")
    value = node.get_attribute("data-value")
    return (float(value) if value else None), node.text


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
        frame = fresh_frame(browser, "spk", shown, "weirDebug.drawn > 0")
        assert frame["max"] == SPIKE, f"span {shown} samples: the envelope's max is {frame['max']}, not the spike"
        assert frame["first"] <= SPIKE_AT < frame["first"] + frame["n"] * frame["step"]
        time.sleep(0.1)  # let the frame reach the canvas before the screenshot
        browser.save_screenshot(str(shots / f"spike_span_{shown}.png"))
        plot = js(browser, "weirDebug.plot('spk')")
        assert plot["x"][1] <= 0, f"span {shown}: the axis passes the newest sample: {plot['x']}"
        if shown > SAMPLES:  # longer than the history: the plot starts at the oldest sample, and says so
            assert plot["x"][0] == pytest.approx(-SAMPLES / 1e6, rel=0.02), (shown, plot["x"])
            assert re.fullmatch(r"history: 164 ms of [\d.]+ m?s asked", plot["history"]), plot["history"]
    # Y hold keeps the range while the view pans to where the spike is not; auto then shrinks it.
    fresh_frame(browser, "spk", browser.execute_script("return weirDebug.setSpan('spk', 1000)"), f"f.max === {SPIKE}")
    time.sleep(0.1)
    held = js(browser, "weirDebug.plot('spk').y")
    assert held[1] >= SPIKE, held
    from selenium.webdriver.support.select import Select
    Select(browser.find_element("css selector", ".view[data-name='spk'] select.ymode")).select_by_value("hold")
    for _ in range(4):  # half a span back each: 2000 samples before the newest
        browser.find_element("css selector", ".view[data-name='spk'] button.back").click()
    wait_for(lambda: js(browser, "(f => f && f.max === 0)(weirDebug.frame('spk'))"), "a frame without the spike")
    time.sleep(0.1)
    plot = js(browser, "weirDebug.plot('spk')")
    assert plot["y"] == held and plot["x"] == pytest.approx([-3e-3, -2e-3], abs=2e-6), plot
    Select(browser.find_element("css selector", ".view[data-name='spk'] select.ymode")).select_by_value("auto")
    wait_for(lambda: js(browser, "weirDebug.plot('spk').y")[1] < 1, "the auto range to shrink")
    assert "y=hold" not in browser.current_url and "off=0.002" in browser.current_url
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
    # dB with its reference (the shard's PSD in V^2/Hz), on a log-frequency grid: every decade with
    # lines at 2..9 times it, labelled at the decades.
    plot = wait_for(lambda: (p := js(browser, "weirDebug.plot('sig.psd')")) and p["xSplits"] and p, "the spectrum's axes")
    assert plot["reference"] == "dB re 1 V²/Hz (dBV/√Hz)" and plot["yLabel"] == plot["reference"]
    assert browser.find_element("css selector", ".view[data-name='sig.psd'] .dbref").text == plot["reference"]
    assert plot["xDistr"] == 3 and plot["xLabel"] == "frequency [Hz]"
    splits = [round(x) for x in plot["xSplits"]]
    for decade in (1000, 10000):
        assert all(k * decade in splits for k in range(1, 10)), (decade, splits)
    labels = dict(zip(splits, plot["xTicks"]))
    assert labels[1000] == "1 kHz" and labels[10000] == "10 kHz" and labels[100000] == "100 kHz", labels
    assert all(re.fullmatch(r"-?\d+ dB", t) for t in plot["yTicks"] if t), plot["yTicks"]
    peak, peak_text = reading(browser, "sig.psd", "pf")
    peak_level, _ = reading(browser, "sig.psd", "pl")
    assert peak == pytest.approx(frequency) and peak_text == "10.01 kHz"
    # The cursor reads the frequency and level under the mouse: here, the peak's bin.
    from selenium.webdriver.common.action_chains import ActionChains
    over = browser.find_element("css selector", ".view[data-name='sig.psd'] .u-over")
    x = js(browser, f"weirDebug.pos('sig.psd', {frequency})")
    ActionChains(browser).move_to_element_with_offset(over, round(x - over.size["width"] / 2), 0).perform()
    wait_for(lambda: reading(browser, "sig.psd", "cf")[0], "the cursor readout")
    at, at_text = reading(browser, "sig.psd", "cf")
    level, level_text = reading(browser, "sig.psd", "cl")
    assert at == pytest.approx(frequency, abs=rate / size) and at_text.endswith("kHz"), at_text
    assert level == pytest.approx(peak_level, abs=6) and level_text.endswith(" dB"), (level, peak_level)
    browser.save_screenshot(str(scratch_dir("page") / "spectrum.png"))
    browser.find_element("css selector", ".view[data-name='sig.psd'] button.logx").click()
    wait_for(lambda: js(browser, "weirDebug.plot('sig.psd').xDistr") == 1, "a linear frequency axis")
    assert browser.current_url.endswith("#view=sig.psd:spectrum:log=0")
    assert console_errors(browser) == []


def click_at(driver, name, t):
    """Clicks the plot of `name`'s view at time t (seconds), in its vertical middle."""
    from selenium.webdriver.common.action_chains import ActionChains
    over = driver.find_element("css selector", f".view[data-name='{name}'] .u-over")
    x = js(driver, f"weirDebug.pos('{name}', {t})")
    size = over.size
    ActionChains(driver).move_to_element_with_offset(over, round(x - size["width"] / 2), 0).click().perform()


def test_a_sines_amplitude_and_frequency_read_back_from_two_cursors(arena, processes, serve, browser):
    rate, hz, amplitude, span = 1e5, 1000.0, 2.0, 300  # three periods of 100 samples: raw samples
    start_sim(processes, arena, "sine", rate=str(rate), extra=("--frequency", str(hz), "--amplitude", str(amplitude)))
    run_weir("set", arena, "count.big", str(2 ** 64 - 1), "--type", "u64")
    run_weir("set", arena, "count.neg", "-7", "--type", "i64")
    run_weir("set", arena, "gain", "2.5", "--type", "f64")
    server = serve(arena)
    load(browser, server, "sine", f"#view=sine:scope:span={span / rate}")
    frame = fresh_frame(browser, "sine", span, "f.flags & 2")
    assert js(browser, "weirDebug.views()") == [{"name": "sine", "kind": "scope", "index": 0}]

    # The axes: time ticks in seconds, never after the newest sample; amplitude ticks in volts.
    plot = wait_for(lambda: (p := js(browser, "weirDebug.plot('sine')")) and p["xTicks"] and p["yTicks"] and p, "ticks")
    times = [parse_si(t, "s") for t in plot["xTicks"]]
    assert len(times) >= 4 and all(t <= 1e-12 for t in times), plot["xTicks"]
    assert min(times) >= -span / rate - 1e-9, plot["xTicks"]
    volts = [parse_si(t, "V") for t in plot["yTicks"]]
    assert min(volts) <= -amplitude + 1e-6 and max(volts) >= amplitude - 1e-6, plot["yTicks"]
    assert plot["yLabel"] == "amplitude [V]" and "newest sample" in plot["xLabel"]
    assert plot["x"][1] <= 0 and plot["x"][0] == pytest.approx(-span / rate, rel=0.02)

    # Pause, put cursor A on one peak and B on the next: 1/Δt is the frequency, V_A the amplitude.
    pause = browser.find_element("css selector", ".view[data-name='sine'] button.pause")
    pause.click()
    wait_for(lambda: pause.text == "run", "the pause button to read 'run'")  # frames are refused from now on
    frame = js(browser, "weirDebug.frame('sine')")
    mid = frame["mid"]
    per = round(rate / hz)
    first = max(range(per), key=mid.__getitem__)
    second = max(range(first + per // 2, first + 3 * per // 2), key=mid.__getitem__)
    at = lambda i: (frame["first"] + (i + 0.5) * frame["step"] - frame["anchor"]) / rate  # noqa: E731
    click_at(browser, "sine", at(first))
    click_at(browser, "sine", at(second))
    # The readouts are written on the page's next draw after the click: wait for the second cursor's.
    wait_for(lambda: reading(browser, "sine", "f")[0] is not None and reading(browser, "sine", "vb")[0] is not None,
             "the 1/Δt and V_B readouts after the second click")
    f, f_text = reading(browser, "sine", "f")
    va, va_text = reading(browser, "sine", "va")
    vb, _ = reading(browser, "sine", "vb")
    dt, dt_text = reading(browser, "sine", "dt")
    assert f == pytest.approx(hz, rel=0.03) and f_text.endswith("Hz"), (f, f_text)
    assert dt == pytest.approx(1 / hz, rel=0.03) and re.fullmatch(r"\d+\.\d+ [mµ]s", dt_text), dt_text
    assert va == pytest.approx(amplitude, rel=0.03) and vb == pytest.approx(amplitude, rel=0.03) and va_text.endswith(" V")
    browser.save_screenshot(str(scratch_dir("page") / "sine_cursors.png"))

    # An oscilloscope's 10 x 8 divisions, then a fixed Y range kept in the URL.
    browser.find_element("css selector", ".view[data-name='sine'] input.divisions").click()
    browser.find_element("css selector", ".view[data-name='sine'] button.pause").click()
    plot = wait_for(lambda: (p := js(browser, "weirDebug.plot('sine')")) and len(p["xSplits"]) == 11 and p, "10 divisions")
    assert len(plot["ySplits"]) == 9 and plot["perDiv"] == "300 µs/div · 500 mV/div", plot
    browser.save_screenshot(str(scratch_dir("page") / "sine_divisions.png"))
    from selenium.webdriver.support.select import Select
    Select(browser.find_element("css selector", ".view[data-name='sine'] select.ymode")).select_by_value("fixed")
    for which, value in (("ymin", "-5"), ("ymax", "5")):
        box = browser.find_element("css selector", f".view[data-name='sine'] input.{which}")
        box.clear()
        box.send_keys(value + "\n")
    wait_for(lambda: js(browser, "weirDebug.plot('sine').y") == [-5, 5], "the fixed Y range")
    assert "y=fixed:ymin=-5:ymax=5" in browser.current_url and "div=1" in browser.current_url

    # A rising-edge trigger at 0 V: time 0 is the crossing, with the pretrigger before it.
    Select(browser.find_element("css selector", ".view[data-name='sine'] select.trigger")).select_by_value("rising")
    wait_for(lambda: js(browser, "(f => f && f.flags & 1)(weirDebug.frame('sine'))"), "a triggered frame")
    plot = wait_for(lambda: (p := js(browser, "weirDebug.plot('sine')")) and p["xLabel"] == "time from the trigger" and p,
                    "the trigger's time axis")
    assert plot["x"][0] < 0 < plot["x"][1], plot["x"]
    assert "trig=rising:level=0" in browser.current_url

    # Integer keys as integers, every digit; reals as reals.
    cell = lambda key: js(browser, f"document.querySelector(\"#keys tr[data-key='{key}'] td:nth-child(2)\").textContent")  # noqa: E731
    wait_for(lambda: browser.find_elements("css selector", "#keys tr[data-key='gain']"), "the keys table")
    assert (cell("count.big"), cell("count.neg"), cell("gain")) == (str(2 ** 64 - 1), "-7", "2.50000")
    assert console_errors(browser) == [] and js(browser, "weirDebug.errors") == []


def parse_si(text, unit):
    """'−2.5 ms' -> -0.0025."""
    match = re.fullmatch(r"([−-]?\d+(?:\.\d+)?) ([GMkmµnp]?)" + unit, text)
    assert match, f"{text!r} is not a number of {unit}"
    scale = {"G": 1e9, "M": 1e6, "k": 1e3, "": 1, "m": 1e-3, "µ": 1e-6, "n": 1e-9, "p": 1e-12}[match.group(2)]
    return float(match.group(1).replace("−", "-")) * scale


def test_a_stopped_writer_is_marked_stale_and_clears_when_it_resumes(arena, processes, serve, browser):
    sim = start_sim(processes, arena, "slow", rate="1e5")  # 24 blocks a second
    server = serve(arena, "--stale-after", "2")
    load(browser, server, "slow", "#view=slow:scope:span=0.01")
    stale_row = ".channel[data-name='slow'].stale"
    wait_for(lambda: js(browser, "weirDebug.plot('slow')"), "the scope")
    assert not js(browser, "weirDebug.plot('slow').stale") and not browser.find_elements("css selector", stale_row)
    os.kill(sim.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: js(browser, "weirDebug.plot('slow').stale"), "the stale badge", timeout=10)
        badge = browser.find_element("css selector", ".view[data-name='slow'] .badge")
        assert badge.is_displayed() and re.fullmatch(r"stale: newest block [\d.]+ m?s old", badge.text), badge.text
        row = js(browser, f"document.querySelector(\"{stale_row}\").textContent")  # the table is redrawn each second
        assert re.search(r"stale [\d.]+ m?s", row), row
        browser.save_screenshot(str(scratch_dir("page") / "stale.png"))
    finally:
        os.kill(sim.pid, signal.SIGCONT)
    wait_for(lambda: not js(browser, "weirDebug.plot('slow').stale"), "the badge to clear", timeout=10)
    wait_for(lambda: not browser.find_elements("css selector", stale_row), "the table to clear")
    assert console_errors(browser) == []


def test_a_gap_is_drawn_as_a_shaded_band(arena, processes, serve, browser):
    gap_at = BLOCKS // 2
    writer = processes(SPIKE_WRITER, arena, "gappy", BLOCKS, SPIKE_AT, SPIKE, gap_at, stdout=subprocess.PIPE,
                       stdin=subprocess.PIPE)
    assert writer.stdout.readline().split() == ["done", str(SAMPLES)]
    server = serve(arena)
    load(browser, server, "gappy", f"#view=gappy:scope:span={SAMPLES / 1e6}")
    frame = fresh_frame(browser, "gappy", SAMPLES, "f.flags & 4")
    where = (gap_at * 4096 - frame["anchor"]) / 1e6  # the gap sits between two blocks
    bucket = frame["step"] / 1e6
    plot = wait_for(lambda: (p := js(browser, "weirDebug.plot('gappy')")) and p["gaps"] and p, "a drawn gap")
    assert any(g["t0"] - bucket <= where <= g["t1"] + bucket for g in plot["gaps"]), (where, plot["gaps"])
    band = next(g for g in plot["gaps"] if g["t0"] - bucket <= where <= g["t1"] + bucket)
    browser.save_screenshot(str(scratch_dir("page") / "gap.png"))
    # The canvas itself: reddish where the band is, in the plot's vertical middle.
    r, g, b = js(browser, f"""(() => {{
      const v = document.querySelector(".view[data-name='gappy']"), c = v.querySelector('canvas');
      const over = v.querySelector('.u-over'), k = c.width / c.clientWidth;
      const x = (over.offsetLeft + {(band['x0'] + band['x1']) / 2}) * k, y = (over.offsetTop + over.clientHeight / 2) * k;
      return Array.from(c.getContext('2d').getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)); }})()""")
    assert r > g + 25 and r > b + 25, (r, g, b)
    browser.save_screenshot(str(scratch_dir("page") / "gap.png"))
    assert console_errors(browser) == []
    writer.stdin.close()


def two_sines(processes, arena, order):
    """Channels a (amplitude 1) and b (amplitude 3) created in `order`; their writers."""
    amplitudes, procs = {"a": 1, "b": 3}, []
    for name in order:
        procs.append(processes(WEIR, "sim", arena, name, "--rate", "1e5", "--block", "1024", "--amplitude", amplitudes[name]))
        wait_for(lambda: name in [c["name"] for c in json.loads(run_weir("ls", arena, "--json").stdout)["channels"]],
                 f"channel {name}")
    return procs


def test_a_view_from_the_url_finds_its_channel_by_name_after_a_reorder(arena, processes, serve, browser):
    writers = two_sines(processes, arena, "ab")
    server = serve(arena)
    load(browser, server, "b", "#view=b:scope:span=0.01")
    fresh_frame(browser, "b", 1000, "f.max > 2.9 && f.max < 3.1")
    assert js(browser, "weirDebug.views()") == [{"name": "b", "kind": "scope", "index": 1}]
    shared = browser.current_url
    assert shared.endswith("#view=b:scope:span=0.01"), shared
    assert console_errors(browser) == []
    # The arena made again under its name with the channels the other way round, served afresh: the
    # shared address shows b, now channel 0, and not a, which has b's old index.
    server.stop()
    for proc in writers:
        proc.terminate()
        proc.wait(timeout=WAIT_S)
    run_weir("rm", arena, "--force")
    run_weir("create", arena)
    two_sines(processes, arena, "ba")
    again = serve(arena)
    browser.get(again.url + shared[shared.index("#"):])
    wait_for(lambda: "b" in (js(browser, "window.weirDebug && weirDebug.channels()") or []), "the new arena")
    frame = fresh_frame(browser, "b", 1000, "f.max > 2.9")
    assert js(browser, "weirDebug.views()") == [{"name": "b", "kind": "scope", "index": 0}]
    assert frame["max"] == pytest.approx(3, rel=0.01)
    browser.save_screenshot(str(scratch_dir("page") / "reordered.png"))
    gone = f":{server.port}/"  # the first page, reconnecting to the stopped server until it was left
    assert [e for e in console_errors(browser) if gone not in e["message"]] == []


def test_the_mca_panel_labels_energy_and_counts_and_shows_out_of_range_apart(arena, serve, browser):
    base, bins = "det.mca", 64
    counts = [0 if i % 7 == 0 else 10 * i for i in range(bins)]
    run_weir("set", arena, base + ".spectrum", "--array", "u32", " ".join(map(str, counts)))
    run_weir("set", arena, base + ".spectrum_axis", "--array", "f32", " ".join(str(25 * i + 12.5) for i in range(bins)))
    run_weir("set", arena, base + ".spectrum_axis_units", "keV")
    run_weir("set", arena, base + ".underflow", "12", "--type", "u64")
    run_weir("set", arena, base + ".overflow", "3", "--type", "u64")
    server = serve(arena)
    browser.get(server.url)
    info = wait_for(lambda: (m := js(browser, "window.weirDebug && weirDebug.mca()")) and m["xTicks"] and m, "the MCA panel")
    energies = [parse_si(t, "eV") for t in info["xTicks"] if t]
    assert len(energies) >= 4 and energies == sorted(energies) and energies[-1] <= 1.6e6, info["xTicks"]
    assert info["xLabel"] == "energy [keV]" and info["yDistr"] == 3
    assert all(re.fullmatch(r"\d+", t) for t in info["yTicks"] if t), info["yTicks"]
    browser.save_screenshot(str(scratch_dir("page") / "mca.png"))
    assert info["outside"] == "outside the range: underflow 12 / overflow 3", info
    browser.find_element("css selector", "#mca-log").click()
    wait_for(lambda: js(browser, "weirDebug.mca().yDistr") == 1, "linear counts")
    assert console_errors(browser) == []


def placed(driver):
    return sorted((v["name"], v["kind"], v["index"]) for v in js(driver, "weirDebug.views()"))


def test_views_follow_their_channels_by_name_when_the_arena_is_recreated_reordered(arena, processes, serve, browser):
    writers = two_sines(processes, arena, "ab")
    server = serve(arena)
    load(browser, server, "b", "#view=b:scope:span=0.01&view=a:scope:span=0.01")
    fresh_frame(browser, "b", 1000, "f.max > 2.9 && f.max < 3.1")
    fresh_frame(browser, "a", 1000, "f.max > 0.9 && f.max < 1.1")
    assert placed(browser) == [("a", "scope", 0), ("b", "scope", 1)]
    # The arena made again under its name, channels the other way round, while the page stays open:
    # the server attaches to the new arena and the page maps each view to its channel's new index.
    for proc in writers:
        proc.terminate()
        proc.wait(timeout=WAIT_S)
    run_weir("rm", arena, "--force")
    run_weir("create", arena)
    two_sines(processes, arena, "ba")
    wait_for(lambda: placed(browser) ==
             [("a", "scope", 1), ("b", "scope", 0)], "the views at their channels' new indices")
    for name in "ab":
        js(browser, f"weirDebug.setSpan('{name}', 1000)")  # forget the frames from before
    fresh_frame(browser, "b", 1000, "f.max > 2.9 && f.max < 3.1")
    fresh_frame(browser, "a", 1000, "f.max > 0.9 && f.max < 1.1")
    assert browser.current_url.endswith("#view=b:scope:span=0.01&view=a:scope:span=0.01")
    browser.save_screenshot(str(scratch_dir("page") / "recreated.png"))
    assert console_errors(browser) == []


def test_the_run_bar_starts_and_stops_a_run_and_is_disabled_without_control(arena, serve, browser, tmp_path):
    run_weir("runctl", "enable", arena, tmp_path / "runs")
    (tmp_path / "token").write_text("page-s3cret\n")
    server = serve(arena, "--allow-control", "--token-file", tmp_path / "token")
    browser.get(server.url + "?token=page-s3cret")  # the page's requests then carry the token's cookie

    def bar(test="true"):
        return js(browser, f"(r => r && r.status && ({test}) && r)(window.weirDebug && weirDebug.run())")

    info = wait_for(lambda: bar("r.allowControl"), "the run bar to show the run state")
    assert info["text"] == "no run yet · idle" and info["startEnabled"] and not info["stopEnabled"], info
    browser.find_element("css selector", "#run-title").send_keys("from the page")
    browser.find_element("css selector", "#run-start").click()
    running = wait_for(lambda: bar("r.status.state === 'running'"), "the run to start")
    assert running["status"]["run"] == 1 and running["status"]["door"] == "http", running
    assert running["status"]["title"] == "from the page" and running["stopEnabled"] and not running["startEnabled"]
    assert browser.find_element("css selector", "#run-state").text.startswith("run 1 · running · 0:0")
    browser.save_screenshot(str(scratch_dir("page") / "run_bar.png"))
    browser.find_element("css selector", "#run-stop").click()
    stopped = wait_for(lambda: bar("r.status.state === 'idle' && r.message.includes('stopped')"), "the run to stop")
    assert stopped["text"] == "run 1 · idle (stopped)" and stopped["message"].startswith("run 1 stopped: 0 file(s)")
    assert json.loads(run_weir("runctl", "status", arena, "--json").stdout)["door"] == "http"
    assert console_errors(browser) == []
    # A server without --allow-control: the state shows, the buttons stay disabled.
    browser.get(serve(arena).url)
    plain = wait_for(lambda: bar("r.text.startsWith('run 1')"), "the run bar of a read-only server")
    assert not plain["allowControl"] and not plain["startEnabled"] and not plain["stopEnabled"], plain
    assert console_errors(browser) == []
