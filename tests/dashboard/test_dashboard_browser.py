"""The live training page in a real headless Chromium, driven by Selenium, while the demo trains.

This is how a person meets the page: ``python -m microtape dashboard --demo``
in one terminal, a browser on the address it prints. The test finds the SVG
charts in the DOM, checks that they hold real data points, that the points
grow between two reads (the Server-Sent Events stream and the page's script
work, under the page's own Content-Security-Policy), and that the charts name
the loss, the gradients and the tensors. It skips only where no Chromium or
chromedriver is installed (``.ci/run`` installs Debian's ``chromium`` and
``chromium-driver``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None,
        reason="no headless browser here: install Debian's chromium and chromium-driver (.ci/run does)",
    ),
    pytest.mark.slow,  # a browser and a training process: the fast tier leaves them out
]
# Seconds to wait for something the page must show; generous, since two busy cores may be
# shared with the rest of the suite. The waits poll and end as soon as it is there.
PATIENCE = 120

COUNT_POINTS = """
return Array.from(document.querySelectorAll("svg.mt-chart")).map(function (svg) {
  var n = 0;
  svg.querySelectorAll("polyline").forEach(function (p) { n += p.points.numberOfItems; });
  return [svg.getAttribute("data-chart"), n, svg.querySelectorAll("rect.mt-bar").length];
});
"""


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    proc = subprocess.Popen(
        # Far more steps than the tests need: the demo trains on until the fixture stops it with
        # Ctrl-C, so the charts grow however slowly the browser starts.
        [sys.executable, "-m", "microtape", "dashboard", "--demo", "--port", "0", "--steps", "1000000", "--delay", "0.03"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline())
        assert match, "the demo did not print its address"
        yield match.group(0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    profile = tempfile.mkdtemp(prefix="microtape-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--no-first-run", "--window-size=1280,1600",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(PATIENCE)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _counts(driver: webdriver.Chrome) -> dict[str, tuple[int, int]]:
    rows = driver.execute_script(COUNT_POINTS)
    assert isinstance(rows, list)
    return {str(kind): (int(points), int(bars)) for kind, points, bars in rows}


def test_the_charts_grow_while_the_demo_trains(demo_url: str, browser: webdriver.Chrome) -> None:
    browser.get(demo_url)
    deadline = time.monotonic() + PATIENCE
    while True:  # wait for the first steps to arrive
        first = _counts(browser)
        if sum(p > 1 for p, _ in first.values()) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(first) == 5, first
    assert sum(p > 1 for p, _ in first.values()) >= 3, f"fewer than three charts hold data: {first}"
    deadline = time.monotonic() + PATIENCE
    while True:  # the stream keeps pushing: the same charts now hold more points
        time.sleep(0.5)
        second = _counts(browser)
        grown = [k for k in ("loss", "grads", "ratio", "tensors") if second[k][0] > first[k][0]]
        if len(grown) >= 3 or time.monotonic() > deadline:
            break
    assert len(grown) >= 3, f"the charts did not grow: first {first}, then {second}"
    assert second["hist"][1] > 0, "the gradient histograms have no bars"
    text = browser.find_element("tag name", "body").text.lower()
    for word in ("loss", "gradient", "tensors"):
        assert word in text, f"the page does not say {word!r}"
    get_log = cast(Callable[[str], list[dict[str, object]]], browser.get_log)  # untyped in selenium
    errors = [e for e in get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors  # e.g. a script the page's Content-Security-Policy refused


def test_the_saved_report_renders_the_same_charts(demo_url: str, browser: webdriver.Chrome) -> None:
    browser.get(demo_url + "report.html")
    counts = _counts(browser)
    assert set(counts) == {"loss", "grads", "ratio", "hist", "tensors"}
    assert counts["loss"][0] > 1 and counts["hist"][1] > 0
    assert not browser.find_elements("tag name", "script")


def test_the_backward_panel_shows_the_first_steps_backward_pass(demo_url: str, browser: webdriver.Chrome) -> None:
    browser.get(demo_url)
    deadline = time.monotonic() + PATIENCE
    while True:  # the demo logs its first step's backward pass; the stream brings the table
        rows = browser.find_elements("css selector", "#mt-backward tbody tr")
        if rows or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert rows, "the Backward panel has no rows"
    text = browser.find_element("id", "mt-backward").text
    assert "Backward pass" in text and "tanh" in text and "matmul" in text
