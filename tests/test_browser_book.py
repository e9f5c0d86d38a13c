"""The built book's "Run in the browser" pages, in a real headless Chromium with every other host unreachable.

The session's book build (the ``editions`` fixture: both editions, as published) is
served by a plain HTTP server on 127.0.0.1, as ``python -m http.server`` serves it.
Chromium resolves no host but 127.0.0.1 (``--host-resolver-rules``) and writes a
NetLog of every request any of its processes makes, Web Workers included; each test
opens one page, presses "Run in the browser", runs every cell and checks what the
cells print against the book's own output (chapter 2 in English, chapter 4 in
Russian) or the grader's verdict (an exercise: its starter fails, its worked
solution, typed into the cells, passes). After the browser quits, its NetLog must
name no host but 127.0.0.1. The page's first output time and the bytes the server
sent are printed (the README quotes them).

Skips only where the tools are really missing: no Chromium or chromedriver (Debian's
``chromium`` and ``chromium-driver``; ``.ci/run`` installs them), or a build without
the Pyodide runtime (no cache and no network; ``.ci/run`` fetches it). In CI
(``CI`` set) a missing runtime fails instead.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from .book_builds import Editions

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
PATIENCE = 240
"""Seconds to wait for Python to start or for every cell to run (two busy cores)."""

BOOK_SIZE_LIMIT = 60 * 2**20
"""The most the built book (both editions, the runtime once) may take on disk: 60 MiB."""

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None,
        reason="no headless browser here: install Debian's chromium and chromium-driver (.ci/run does)",
    ),
    pytest.mark.slow,
]


@dataclass
class Served:
    """The book on 127.0.0.1: its address, and every path served with its size in bytes."""

    url: str
    sent: list[tuple[str, int]] = field(default_factory=list)


def _runtime_or_skip(editions: Editions) -> None:
    assert editions.english.returncode == 0, editions.english.stderr[-3000:]
    if (editions.en / "_static" / "pyodide" / "pyodide.asm.wasm").is_file():
        return
    why = re.search(r"browser pages: (.*)", editions.english.stderr)
    reason = f"the book was built without its Pyodide runtime ({why.group(1) if why else 'no message'}); python3 docs/_ext/pyodide_runtime.py fetches it"
    if os.environ.get("CI"):
        pytest.fail(reason + " (.ci/run must fetch it)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def served(editions: Editions) -> Iterator[Served]:
    _runtime_or_skip(editions)
    record = Served("")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def copyfile(self, source: BinaryIO, outputfile: BinaryIO) -> None:  # type: ignore[override]  # typeshed's is wider
            before = source.tell()
            super().copyfile(source, outputfile)
            record.sent.append((self.path, source.tell() - before))

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(editions.en)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    record.url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Browser:
    driver: webdriver.Chrome
    netlog: Path
    ended: bool = False

    def quit(self) -> None:
        if not self.ended:
            self.ended = True
            self.driver.quit()


@pytest.fixture
def browser() -> Iterator[Browser]:
    """A fresh headless Chromium (nothing cached) that can reach only 127.0.0.1 and logs every request."""
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    folder = Path(tempfile.mkdtemp(prefix="microtape-chromium-"))
    netlog = folder / "netlog.json"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=1280,1600", f"--user-data-dir={folder / 'profile'}",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--log-net-log={netlog}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(PATIENCE)
    browser = Browser(driver, netlog)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(folder, ignore_errors=True)


def requests_by_the_book(path: Path, origin: str) -> list[str]:
    """The URL of every request the book's pages and their workers started (their initiator is the book's origin).

    Chromium's own background requests (its update, sign-in and search-engine services) carry no
    initiator ("not an origin"); here they cannot resolve anyway (``--host-resolver-rules``).
    """
    log = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    found = []
    for event in log["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and params.get("initiator") == origin:
            found.append(str(params["url"]))
    return found


def test_the_netlog_reader_finds_the_pages_requests(tmp_path: Path) -> None:
    log = tmp_path / "netlog.json"
    start = {"params": {"url": "https://cdn.example.org/pyodide.js", "initiator": "http://127.0.0.1:8000"}, "type": 7}
    browser_own = {"params": {"url": "https://update.example.com/", "initiator": "not an origin"}, "type": 7}
    other = {"params": {"url": "http://127.0.0.1:8000/a", "initiator": "http://127.0.0.1:8000"}, "type": 8}
    log.write_text(json.dumps({"constants": {"logEventTypes": {"URL_REQUEST_START_JOB": 7, "REQUEST_ALIVE": 8}},
                               "events": [start, browser_own, other]}))
    assert requests_by_the_book(log, "http://127.0.0.1:8000") == ["https://cdn.example.org/pyodide.js"]


def _state(driver: webdriver.Chrome) -> str:
    return str(driver.execute_script("return document.getElementById('mt-run-bar').dataset.state"))


def _wait(driver: webdriver.Chrome, states: tuple[str, ...]) -> str:
    deadline = time.monotonic() + PATIENCE
    while (state := _state(driver)) not in states and time.monotonic() < deadline:
        time.sleep(0.2)
    return state


BOOK_OUTPUTS = """
return Array.from(document.querySelectorAll("article div.highlight-Python")).map(function (block) {
  for (var next = block.nextElementSibling; next; next = next.nextElementSibling) {
    if (next.matches("div.highlight-Python")) break;
    if (next.matches(".sphx-glr-script-out")) return next.textContent;
  }
  return "";
});
"""
CELL_OUTPUTS = """
return Array.from(document.querySelectorAll(".mt-cell")).map(function (cell) {
  var out = cell.querySelector(".mt-cell-output");
  return [cell.dataset.state, out.hidden ? "" : out.textContent];
});
"""


def run_page(browser: Browser, served: Served, page: str) -> tuple[list[str], list[tuple[str, str]], float]:
    """Open ``page``, press the button, run every cell; return the book's outputs, the cells' (state, output), the first output's ms."""
    driver = browser.driver
    driver.get(served.url + page)
    # On two busy cores the page's code blocks can be read before the document is complete: wait for them.
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline and not driver.execute_script(
        "return document.readyState === 'complete' && document.querySelectorAll('article div.highlight-Python').length"
    ):
        time.sleep(0.2)
    book = [str(text) for text in driver.execute_script(BOOK_OUTPUTS)]
    driver.find_element("id", "mt-run-button").click()
    assert _wait(driver, ("ready", "failed")) == "ready", driver.find_element("css selector", ".mt-run-status").text
    driver.find_element("css selector", ".mt-run-all").click()
    assert _wait(driver, ("done", "failed")) == "done", driver.find_element("css selector", ".mt-run-status").text
    cells = [(str(state), str(text)) for state, text in driver.execute_script(CELL_OUTPUTS)]
    first = float(driver.execute_script("return Number(document.getElementById('mt-run-bar').dataset.firstOutputMs)"))
    return book, cells, first


def _only_loopback(browser: Browser, served: Served, page: str, first_ms: float) -> None:
    browser.quit()  # the NetLog is complete once the browser has ended
    origin = served.url.rstrip("/")
    urls = requests_by_the_book(browser.netlog, origin)
    assert any(u.endswith("/_static/pyodide/pyodide.asm.wasm") for u in urls), f"the NetLog missed the worker's requests: {urls}"
    elsewhere = [u for u in urls if not u.startswith(origin + "/")]
    assert not elsewhere, f"the page asked for something outside the book: {elsewhere}"
    sent = sum(size for _, size in served.sent)
    print(f"\n{page}: first output {first_ms / 1000:.1f} s after the click; {sent / 2**20:.1f} MiB served "
          f"in {len(served.sent)} requests (nothing cached)")
    served.sent.clear()


TINY = re.compile(r"-?\d\.\d+e-(?:0?9|[1-9]\d)\b")
"""A number below 1e-8 in scientific notation: a finite-difference error, at the level of rounding."""


def _normalised(text: str) -> list[str]:
    """A cell's output as lines to compare with the book's, four things aside.

    * Absolute ``memory()`` counts: the book runs every chapter in one process (a chapter finds
      the earlier chapters' tensors alive), a page runs one chapter.
    * Folders: a message that names a line of the chapter names the book's build folder in the
      book (``/tmp/.../tutorials/02_automatic_gradients.py:99``), the file alone in the browser.
    * Layout: sphinx-gallery dedents what a cell prints and puts a blank line between its
      printing and the value of its last expression.
    * Rounding: Pyodide's ``math`` (emscripten's libm) can differ from glibc's in the last bit,
      which changes a finite-difference error of 1e-11 and the order of the rows sorted by it;
      such numbers are masked and the lines compared as a multiset.
    """
    text = re.sub(r"\b\d+ tensors \(\d+ bytes\)", "N tensors (B bytes)", text)
    text = re.sub(r"(?<![\w.])/(?:[^\s:/]+/)+([\w.-]+\.py):(\d+)", r"\1:\2", text)  # the book's build folder
    lines = [line.rstrip() for line in textwrap.dedent(text).splitlines() if line.strip()]
    return sorted(TINY.sub("~0", line) for line in lines) if any(TINY.search(line) for line in lines) else lines


def _differences(cells: list[tuple[str, str]], book: list[str]) -> list[tuple[int, str, str]]:
    """(cell, browser's output, book's output) for every cell whose output is not the book's."""
    return [(i, text, want) for i, ((_, text), want) in enumerate(zip(cells, book)) if want and _normalised(text) != _normalised(want)]


def test_chapter_2_runs_in_the_browser_as_in_the_book(served: Served, browser: Browser) -> None:
    served.sent.clear()
    book, cells, first = run_page(browser, served, "book/02_automatic_gradients.html")
    assert len(cells) == len(book) > 10
    assert all(state == "done" for state, _ in cells), cells
    outputs = "\n".join(text for _, text in cells)
    assert "Tensor(-17.5, shape=())" in outputs and "[-17.5]\n[-5.5]" in outputs  # the text's gradients
    assert "tensors left behind by 300 steps: 0" in outputs
    assert "matplotlib" in outputs  # the plot cell says why it draws nothing
    differ = _differences(cells, book)
    assert not differ, differ
    _only_loopback(browser, served, "chapter 2", first)


def test_chapter_4_runs_in_the_russian_edition(served: Served, browser: Browser) -> None:
    served.sent.clear()
    driver = browser.driver
    book, cells, first = run_page(browser, served, "ru/book/04_checking_gradients.html")
    assert driver.find_element("id", "mt-run-button").get_attribute("textContent") == "Запустить в браузере"
    assert "Python готов" in driver.find_element("css selector", ".mt-run-status").text or _state(driver) == "done"
    assert len(cells) == len(book) > 10
    assert all(state == "done" for state, _ in cells), [c for c in cells if c[0] != "done"]
    outputs = "\n".join(text for _, text in cells)
    # check_grads' verdicts, in Russian: the chapter's correct gradients pass, its planted wrong VJP fails
    assert "check_grads: пройдена; mode=full, order=1" in outputs and "check_grads: НЕ ПРОЙДЕНА" in outputs, outputs[:3000]
    differ = _differences(cells, book)
    assert not differ, differ
    _only_loopback(browser, served, "chapter 4 (Russian)", first)


def test_an_exercise_is_checked_in_the_page(served: Served, browser: Browser) -> None:
    served.sent.clear()
    driver = browser.driver
    _, cells, first = run_page(browser, served, "exercises/ex04_softplus_vjp.html")
    verdict = cells[-1][1]
    assert "grading ex04_softplus_vjp.py: ex04_softplus_vjp (chapter 4" in verdict, verdict
    assert "TODO" in verdict and "checks passed" in verdict and "all 5 checks passed" not in verdict, verdict
    solution = (ROOT / "tutorials" / "exercises" / "solutions" / "ex04_softplus_vjp.py").read_text(encoding="utf-8")
    driver.execute_script(
        "var code = arguments[0], areas = Array.from(document.querySelectorAll('.mt-cell textarea')).slice(0, -1);"
        "areas.forEach(function (area, i) { area.value = i === 0 ? code : ''; });", solution)
    driver.find_element("css selector", ".mt-run-all").click()
    time.sleep(0.3)
    assert _wait(driver, ("done", "failed")) == "done"
    verdict = [str(text) for _, text in driver.execute_script(CELL_OUTPUTS)][-1]
    assert re.search(r"ex04_softplus_vjp: all \d+ checks passed", verdict), verdict
    assert "FAIL" not in verdict and "TODO" not in verdict
    _only_loopback(browser, served, "an exercise", first)


def test_an_endless_check_is_stopped_and_the_page_stays_alive(served: Served, browser: Browser) -> None:
    """The page ends its worker after its limit: the page keeps answering, and Python starts again."""
    driver = browser.driver
    driver.get(served.url + "exercises/ex00_gradient_by_hand.html")
    config = driver.find_element("id", "mt-run-config").get_attribute("textContent") or "{}"
    assert json.loads(config)["limit"] >= 10
    driver.find_element("id", "mt-run-button").click()
    assert _wait(driver, ("ready", "failed")) == "ready"
    driver.execute_script(
        "var areas = Array.from(document.querySelectorAll('.mt-cell textarea'));"
        "areas[0].value = 'EXERCISE = \"ex00_gradient_by_hand\"\\nwhile True:\\n    pass';"
        "areas.slice(1, -1).forEach(function (area) { area.value = ''; });")
    start = time.monotonic()
    driver.execute_script("document.querySelectorAll('.mt-cell .mt-cell-run')[document.querySelectorAll('.mt-cell').length - 1].click()")
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        assert driver.execute_script("return 1 + 1") == 2  # the page answers while Python loops
        state = driver.execute_script("var c = document.querySelectorAll('.mt-cell'); return c[c.length - 1].dataset.state")
        if state != "running":
            break
        time.sleep(0.5)
    assert state == "error"
    text = cast(str, driver.execute_script("var c = document.querySelectorAll('.mt-cell-output'); return c[c.length - 1].textContent"))
    assert "Stopped after" in text and "endless loop" in text, text
    assert time.monotonic() - start < PATIENCE
    assert _wait(driver, ("ready", "failed")) == "ready"  # a new Python is there for the next run


def test_the_book_stays_within_its_size(editions: Editions) -> None:
    """Both editions, the Pyodide runtime once (the Russian edition loads the English edition's copy)."""
    _runtime_or_skip(editions)
    total = sum(p.stat().st_size for p in editions.en.rglob("*") if p.is_file())
    runtime = sum(p.stat().st_size for p in (editions.en / "_static" / "pyodide").iterdir())
    print(f"\nthe built book: {total / 2**20:.1f} MiB, of which the Pyodide runtime {runtime / 2**20:.1f} MiB")
    assert not (editions.ru / "_static" / "pyodide").exists(), "the Russian edition must share the English edition's runtime"
    assert total <= BOOK_SIZE_LIMIT, f"the built book is {total / 2**20:.1f} MiB, over {BOOK_SIZE_LIMIT / 2**20:.0f} MiB"
