"""The live training page against a real server on an ephemeral port, read with the standard library.

Every test opens its own :class:`microtape.Dashboard` on 127.0.0.1 port 0
and talks to it the way a browser would: plain HTTP requests and a
Server-Sent Events stream. Nothing here measures time (the slowdown with
viewers attached is measured in ``bench/dashboard.py``).
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import microtape as mt
from microtape.dashboard.demo import USAGE, train_rnn

ROOT = Path(__file__).resolve().parents[2]


def _feed(dash: mt.Dashboard, steps: range, spike_at: int | None = None, tensors: int | None = None) -> None:
    """Log ``steps``; ``tensors=None`` lets ``log`` count the arena (memory() walks every live tensor)."""
    for step in steps:
        loss = 1e9 if step == spike_at else 1.0 / (step + 1)
        grads = {"w": mt.tensor([0.1 * (step + 1), -0.2]), "b": mt.tensor([0.01])}
        variables = {"w": mt.tensor([1.0 + step, 2.0])}
        dash.log(step, loss=loss, grads=grads, variables=variables, tensors=tensors)
        mt.dispose([*grads.values(), *variables.values()])  # later memory tests measure a small arena


def _get(dash: mt.Dashboard, path: str, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", dash.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


class _Events:
    """A Server-Sent Events reader over a raw socket: yields (event, data) pairs."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        self.head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        assert chunk, "the server closed the event stream"
        return chunk

    def next(self) -> tuple[str, dict[str, object]]:
        while True:
            while b"\n\n" not in self.buffer:
                self.buffer += self._recv()
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.decode().splitlines() if ": " in line and not line.startswith(":"))
            if "event" in fields:
                return fields["event"], json.loads(fields["data"])

    def close(self) -> None:
        self.sock.close()


def _points(svg: str) -> int:
    return sum(len(p.split()) for p in re.findall(r'<polyline points="([^"]*)"', svg))


@pytest.fixture
def dash() -> Iterator[mt.Dashboard]:
    with mt.Dashboard("endpoint test", port=0, interval=0.05) as served:
        _feed(served, range(5))
        yield served


def test_the_page_is_served_on_loopback_with_charts_that_name_what_they_show(dash: mt.Dashboard) -> None:
    assert dash.url.startswith("http://127.0.0.1:") and dash.port > 0
    status, headers, body = _get(dash, "/")
    page = body.decode()
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert page.count("<svg") == 5 and "<polyline" in page
    for word in ("loss", "gradient", "tensors", "Update-to-weight", "histograms"):
        assert word in page
    assert "exploding above" in page and "vanishing below" in page  # the monitor's thresholds are marked
    assert "default-src 'none'" in headers["content-security-policy"]  # the browser loads nothing else
    assert not re.search(r'(src|href)="(https?:)?//', page), "the page must not load anything from elsewhere"


def test_the_event_stream_pushes_new_charts_as_training_goes_on(dash: mt.Dashboard) -> None:
    events = _Events(dash.port)
    try:
        assert b"text/event-stream" in events.head
        kind, first = events.next()
        assert kind == "update"
        charts = first["charts"]
        assert isinstance(charts, dict) and set(charts) == {"loss", "grads", "ratio", "hist", "tensors"}
        before = _points(charts["loss"])
        assert before == 5
        _feed(dash, range(5, 12))
        for _ in range(20):  # the server may push while the steps arrive: read until the last one is in
            kind, later = events.next()
            assert kind == "update"
            if "step 11" in str(later["status"]):
                break
        drawn = later["charts"]
        assert isinstance(drawn, dict) and _points(drawn["loss"]) == 12 and "step 11" in str(later["status"])
    finally:
        events.close()


def test_the_stream_ends_with_a_done_event_when_the_dashboard_closes() -> None:
    with mt.Dashboard(port=0, interval=0.05) as served:
        _feed(served, range(3))
        events = _Events(served.port)
        assert events.next()[0] == "update"
    try:
        kind, last = events.next()
        while kind == "update":  # one may have been on its way
            kind, last = events.next()
        assert kind == "done" and "training finished" in str(last["status"])
    finally:
        events.close()


@pytest.mark.parametrize(
    "path",
    ["/nope", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
     "/microtape/dashboard/page.py", "//etc/passwd", "/events/../../pyproject.toml", "/static/page.js"],
)
def test_unknown_paths_and_traversal_attempts_are_404(dash: mt.Dashboard, path: str) -> None:
    status, _, body = _get(dash, path)
    assert status == 404
    assert b"root:" not in body and b"import" not in body and b"[project]" not in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_the_server_is_read_only(dash: mt.Dashboard, method: str) -> None:
    before = dash.data()
    for path in ("/", "/events", "/data.json"):
        status, headers, _ = _get(dash, path, method)
        assert status == 405 and headers["allow"] == "GET, HEAD"
    assert dash.data() == before


def test_the_data_and_the_report_are_served_too(dash: mt.Dashboard) -> None:
    status, headers, body = _get(dash, "/data.json")
    data = json.loads(body)
    assert status == 200 and headers["content-type"] == "application/json"
    assert data["loss"] == [[s, 1.0 / (s + 1)] for s in range(5)]
    status, _, report = _get(dash, "/report.html")
    assert status == 200 and report.count(b"<svg") == 5 and b"<script" not in report
    status, headers, body = _get(dash, "/", "HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 1000


def test_a_foreign_host_name_is_refused(dash: mt.Dashboard) -> None:
    """A page on another site cannot read ours by pointing its own name at 127.0.0.1 (DNS rebinding)."""
    assert _get(dash, "/data.json", host="evil.example:80")[0] == 403
    assert _get(dash, "/data.json", host=f"localhost:{dash.port}")[0] == 200


@pytest.mark.slow
def test_memory_stays_bounded_on_a_long_run_and_spikes_survive_thinning() -> None:
    dash = mt.Dashboard(max_points=64)
    # the count is given: memory() walks every live tensor, and what earlier test modules left
    # alive would make 5,000 of them the slowest part of the suite
    _feed(dash, range(5000), spike_at=3001, tensors=3)
    data = dash.data()
    for key in ("loss", "tensors", "global_norm"):
        series = data[key]
        assert isinstance(series, list)
        assert 32 <= len(series) <= 64, (key, len(series))
    loss = data["loss"]
    assert isinstance(loss, list) and max(v for _, v in loss) == 1e9  # the spike was kept, not averaged away
    assert loss[-1][0] >= 4900  # and the newest steps are there
    assert dash.num_points() <= 64 * 6


@pytest.mark.slow
def test_memory_does_not_grow_with_the_number_of_steps() -> None:
    """Thinning bounds what is kept: the step being merged is one running winner, not a list."""
    dash = mt.Dashboard(max_points=16)
    sizes = []
    tracemalloc.start()
    try:
        for step in range(40_000):
            dash.log(step, loss=1.0 + step % 7, tensors=3)
            if step + 1 in (10_000, 40_000):
                gc.collect()
                sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert sizes[1] - sizes[0] < 4096, f"{sizes[1] - sizes[0]} bytes more after 30,000 more steps"


def test_a_viewer_that_leaves_or_twenty_that_never_read_do_not_stop_training(dash: mt.Dashboard) -> None:
    gone = _Events(dash.port)
    gone.next()
    gone.sock.shutdown(socket.SHUT_RDWR)
    gone.close()
    idle = [socket.create_connection(("127.0.0.1", dash.port), timeout=10) for _ in range(20)]
    try:
        for s in idle:
            s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _feed(dash, range(5, 400))  # would raise or hang if a viewer could block the loop
        assert dash.data()["last_step"] == 399
        assert _get(dash, "/")[0] == 200  # and the server still answers
    finally:
        for s in idle:
            s.close()


def test_async_with_serves_between_steps_when_the_loop_awaits_next_frame() -> None:
    async def main() -> tuple[int, bytes]:
        async with mt.Dashboard(port=0, interval=0.05) as dash:
            served_at: list[int] = []

            async def browser() -> bytes:
                reader, writer = await asyncio.open_connection("127.0.0.1", dash.port)
                writer.write(b"GET /data.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                body = await reader.read()
                served_at.append(int(dash.data()["steps_logged"]))  # type: ignore[call-overload]  # an int
                writer.close()
                return body

            task = asyncio.create_task(browser())
            for step in range(200):
                dash.log(step, loss=1.0)
                await mt.next_frame()
            body = await task
        return served_at[0], body

    at, body = asyncio.run(main())
    assert at < 200, "the page was answered only after training: next_frame did not give the server a turn"
    assert body.startswith(b"HTTP/1.1 200")


def test_a_busy_port_is_a_clear_error() -> None:
    with mt.Dashboard(port=0) as first:
        with pytest.raises(mt.DashboardError, match="cannot serve") as info:
            with mt.Dashboard(port=first.port):
                pass
    assert "port=0" in str(info.value)


def test_another_address_than_loopback_warns() -> None:
    with pytest.warns(UserWarning, match="other machines may reach it"):
        with mt.Dashboard(host="0.0.0.0", port=0) as dash:
            assert dash.port > 0


def test_a_failed_log_records_nothing() -> None:
    dash = mt.Dashboard()
    _feed(dash, range(3))
    before = dash.data()
    with pytest.raises(mt.InvalidArgumentError, match="steps must increase"):
        dash.log(2, loss=1.0)
    with pytest.raises(mt.InvalidArgumentError, match="a loss is one number"):
        dash.log(3, loss=mt.tensor([1.0, 2.0]))
    with pytest.raises(mt.InvalidArgumentError, match="not a set of gradients"):
        dash.log(3, loss=1.0, grads="w")
    with pytest.raises(mt.InvalidArgumentError, match="list of variables"):
        dash.log(3, loss=1.0, variables=[mt.tensor([1.0])])  # type: ignore[list-item]  # the mistake under test
    with pytest.raises(mt.InvalidArgumentError, match="port"):
        mt.Dashboard(port=70000)
    assert dash.data() == before


def test_gradients_in_every_form_the_library_returns_are_accepted() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="dash_forms_w")
    result = mt.variable_grads(lambda: (w * w).sum())
    dash = mt.Dashboard()
    dash.log(0, grads=result)  # a VariableGrads
    dash.log(1, grads=result.grads)  # its GradMap
    dash.log(2, grads=[(result.grads[w], w)])  # apply_gradients pairs
    dash.log(3, grads={w: result.grads[w]})  # keyed by the variable
    norms = dash.data()["grad_norm"]
    assert isinstance(norms, dict) and [v for _, v in norms["dash_forms_w"]] == [pytest.approx(20**0.5)] * 4
    dash.log(4, grads=[result.grads[w]])  # a plain list: named by position
    assert "0" in norms or "0" in dash.data()["grad_norm"]  # type: ignore[operator]  # a dict
    mt.dispose([result.value, w, *result.grads.values()])


def test_a_monitor_feeds_norms_thresholds_and_flags() -> None:
    monitor = mt.GradientMonitor(explode_norm=10.0, vanish_norm=1e-3)
    dash = mt.Dashboard(monitor=monitor)
    for step, g in enumerate([1.0, 100.0, 1e-5]):
        monitor.record({"w": mt.tensor([g])})
        dash.log(step, loss=g)
    data = dash.data()
    assert data["grad_norm"] == {"w": [[0, 1.0], [1, 100.0], [2, 1e-5]]}
    assert data["thresholds"] == {"explode_norm": 10.0, "vanish_norm": 1e-3}
    assert data["flags"] == monitor.flags and data["flag_count"] == 2


def test_the_saved_report_is_the_embedded_one(tmp_path: Path) -> None:
    dash = mt.Dashboard("report test")
    asyncio.run(train_rnn(dash, steps=16))
    path = dash.save_html(tmp_path / "report.html")
    text = path.read_text(encoding="utf-8")
    fragment = dash._repr_html_()
    assert fragment.split("</style>", 1)[1] in text
    assert text.count("<svg") == 5 and "<script" not in text and not re.search(r'(src|href)=', text)
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left behind
    with pytest.raises(mt.DashboardError, match="does not exist"):
        dash.save_html(tmp_path / "missing" / "report.html")


def test_cli_without_demo_explains_the_python_api() -> None:
    out = subprocess.run([sys.executable, "-m", "microtape", "dashboard"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == USAGE.strip()
    assert "mt.Dashboard" in out.stdout and "await mt.next_frame()" in out.stdout


@pytest.mark.slow
def test_cli_demo_serves_while_training_and_ctrl_c_stops_cleanly() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "microtape", "dashboard", "--demo", "--port", "0", "--steps", "100000"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        port = int(match.group(1))

        def data() -> dict[str, Any]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("GET", "/data.json")
                document = json.loads(conn.getresponse().read())
            finally:
                conn.close()
            assert isinstance(document, dict)
            return document

        first = data()
        assert first["steps_logged"] >= 0
        deadline = time.monotonic() + 120  # a generous limit on a busy machine; usually well under a second
        second = data()
        while second["steps_logged"] <= first["steps_logged"] and time.monotonic() < deadline:
            time.sleep(0.05)  # poll: training runs on in the other process
            second = data()
        assert second["steps_logged"] > first["steps_logged"], (first["steps_logged"], second["steps_logged"])
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)  # a generous limit: stopping is quick, busy cores are slow
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "stopped" in out
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@pytest.mark.slow
def test_the_program_the_cli_prints_runs(tmp_path: Path) -> None:
    program = USAGE.split("\n\n", 1)[1].rsplit("\n\nA plain loop", 1)[0]
    program = (program.replace("port=8765", "port=0").replace("range(2000)", "range(30)")
               .replace("asyncio.sleep(0.01)", "asyncio.sleep(0)").replace('"report.html"', repr(str(tmp_path / "r.html"))))
    out = subprocess.run([sys.executable, "-W", "error", "-c", program], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("open http://127.0.0.1:")
    assert (tmp_path / "r.html").read_text(encoding="utf-8").count("<svg") == 5


@pytest.mark.slow
def test_the_dashboard_benchmark_runs() -> None:
    """``bench/dashboard.py --quick`` still works (it asserts nothing about time: that is for a person to read)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "dashboard.py"), "--quick"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "20 reading" in out.stdout and "20 stalled" in out.stdout and "points kept" in out.stdout


def test_the_demos_backward_panel_names_the_demos_lines_and_stays_small() -> None:
    """Guards the bugs: every Backward row of the demo named ``asyncio/events.py:80`` (the
    user-line search skipped the whole package, the demo with it), and its cells held whole
    matrices (317 KB of /data.json for a 20-step net)."""
    dash = mt.Dashboard("backward panel test")
    asyncio.run(train_rnn(dash, steps=2))
    data = dash.data()
    panel = data["backward"]
    assert isinstance(panel, dict)
    rows = panel["rows"]
    assert isinstance(rows, list) and rows
    for row in rows:
        assert isinstance(row, dict) and "demo.py:" in str(row["where"]), row["where"]
        assert all(len(str(row[k])) < 400 for k in ("dout", "grads", "accumulated")), row
    assert len(json.dumps(data)) < 100_000


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_live_script_is_the_one_the_policy_allows_in_every_language(lang: str) -> None:
    """The server's Content-Security-Policy allows the page's script by its SHA-256: the script must be
    the same bytes in every language (a Russian word spliced into it was refused by the browser, and the
    charts stopped growing), and the words it may show come from the status line's attributes."""
    import base64
    import hashlib

    from microtape.dashboard import charts, server

    mt.set_language("ru" if lang == "ru" else "en")
    try:
        page = charts.page("t", "s", "f", True, {}, "foot", live=True)
    finally:
        mt.set_language(None)
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in server.CSP
    stopped = re.search(r'data-stopped="([^"]*)"', page)
    assert stopped is not None
    assert stopped.group(1) == ("скрипт обучения больше не отдаёт эту страницу" if lang == "ru" else "the training script has stopped serving this page")


def test_one_entry_gradients_get_no_histogram_and_the_tensor_chart_counts_the_run() -> None:
    """A histogram of one value says nothing (the chapter's w and b drew one bar each); the tensor chart
    counted every tensor of the process (462 in the book's build) where a reader wants the run's own."""
    kept = [mt.scalar(float(i)) for i in range(5)]  # alive before the run: not the run's
    first = {"w": mt.scalar(0.5), "b": mt.scalar(-0.25)}
    second = {"w": mt.tensor([0.5, 0.1, -0.3]), "b": mt.scalar(-0.25)}
    dash = mt.Dashboard()
    before = mt.memory().num_tensors
    made = mt.tensor([1.0, 2.0])  # the run's one tensor
    dash.log(0, loss=1.0, grads=first)
    hist = dash.render()["charts"]["hist"]
    assert 'class="mt-bar"' not in hist and "each gradient is one number: see its norm" in hist
    dash.log(1, loss=0.5, grads=second)
    rendered = dash.render()["charts"]
    assert rendered["hist"].count('class="mt-panel-title"') == 1  # w only
    assert "one value, not drawn: b" in rendered["hist"]
    data = dash.data()
    assert data["tensors_before"] == before
    assert data["tensors"] == [[0, 1.0], [1, 1.0]]  # `made`, whatever else the process holds
    assert f"memory().num_tensors − {before} alive before the run" in rendered["tensors"]
    dash.log(2, loss=0.25, tensors=40)  # a count the caller gives is charted as given
    assert dash.data()["tensors"] == [[0, 1.0], [1, 1.0], [2, 40.0]] and dash.data()["tensors_before"] is None
    del kept, made
