"""The live page cannot be frozen or broken by data.

Hostile values (gradients at the ends of the float range, NaN and Inf
losses, a step of 10**400, names with markup) either draw or are refused by
``log`` before anything is recorded; ``/data.json`` stays strict JSON; the
server answers over-long requests and ``HEAD /events`` properly; a failed
``save_html`` leaves nothing behind; the demo's exploding run ends once the
monitor has flagged it for a while.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import microtape as mt
from microtape.dashboard.demo import FLAGGED_STEPS, train_rnn
from microtape.dashboard.server import Server

ROOT = Path(__file__).resolve().parents[2]
MARKUP = '<script>alert("x")</script>&amp;'


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _hostile(dash: mt.Dashboard) -> None:
    losses = [1.0, math.nan, math.inf, -math.inf, 1e308, -1.7e308, 0.0]
    for step, loss in enumerate(losses):
        dash.log(
            step,
            loss=loss,
            grads={
                "w": mt.tensor([-1e308, 1e308]),
                MARKUP: mt.tensor([1.7e308, 1.7e308, math.nan]),
                "tiny": mt.tensor([5e-324, 0.0]),
            },
            variables={"v": mt.tensor([1.7e308 if step % 2 else -1.7e308])},
            tensors=step,
        )
    dash.mark(3, MARKUP)


def test_hostile_values_draw_and_data_is_strict_json(tmp_path: Path) -> None:
    """Guards the bugs: the histogram of [-1e308, 1e308] raised, /data.json wrote NaN (not JSON)."""
    dash = mt.Dashboard(MARKUP)
    _hostile(dash)
    page = dash.html(live=True)
    assert MARKUP not in page and "&lt;script&gt;" in page
    assert page.count("<svg") == 5 and "nan," not in page.lower() and "inf," not in page.lower()
    rendered = dash.render()
    json.dumps(rendered, allow_nan=False)  # the event stream's payload
    assert rendered["flags"].startswith("14 flags raised; the first:\nstep 0: NaN/Inf in the gradient of <script>")
    huge = mt.Dashboard()
    huge.log(0, loss=10**400)
    huge.log(1, loss=-(10**400))
    assert huge.data()["loss"] == [[0, math.inf], [1, -math.inf]]
    overflow = mt.Dashboard()
    overflow.log(0, loss=1.0, grads={"w": mt.tensor([1.7e308, 1.7e308])})
    assert "global norm inf > 1000 (overflow" in overflow.render()["flags"]
    assert dash.save_html(tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with mt.Dashboard(MARKUP, port=0) as served:
        _hostile(served)
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
        conn.request("GET", "/data.json")
        data = _strict_json(conn.getresponse().read().decode())
        assert isinstance(data, dict)
        assert data["loss"][1:4] == [[1, "NaN"], [2, "Infinity"], [3, "-Infinity"]]
        assert data["grad_norm"]["w"][0] == [0, pytest.approx(math.sqrt(2) * 1e308)]
        assert data["grad_norm"][MARKUP][0] == [0, "NaN"]


@pytest.mark.parametrize(
    "call",
    [
        {"step": 10**400},
        {"step": 2**53},
        {"step": "7"},
        {"grads": {"w": 3.0}},
        {"grads": [mt.tensor([1.0]), "x"]},
        {"grads": {"w": mt.tensor([1.0]), "b": [1.0, 2.0]}},
        {"tensors": 10**400},
        {"tensors": -1},
        {"tensors": "12"},
        {"loss": "0.5"},
        {"variables": [mt.tensor([1.0])]},
    ],
    ids=lambda call: next(iter(call)) + "=" + repr(next(iter(call.values())))[:20],
)
def test_log_validates_everything_before_recording_anything(call: dict[str, object]) -> None:
    """Guards the bug: a wrong value in grads= was skipped or raised after part of the call was recorded."""
    dash = mt.Dashboard()
    dash.log(0, loss=1.0, grads={"w": mt.tensor([1.0])}, tensors=1)
    before, version = json.dumps(dash.data()), dash.version
    args: dict[str, object] = {"step": 1, "loss": 0.5, "grads": {"w": mt.tensor([0.5])}, "tensors": 2}
    args.update(call)
    with pytest.raises(mt.InvalidArgumentError) as caught:
        dash.log(**args)  # type: ignore[arg-type]
    assert "hint:" in caught.value.message
    assert json.dumps(dash.data()) == before and dash.version == version
    assert len(caught.value.message.splitlines()[0]) < 200  # a 401-digit step is not printed whole


def test_marks_refuse_a_step_the_charts_cannot_place() -> None:
    dash = mt.Dashboard()
    with pytest.raises(mt.InvalidArgumentError, match="below 2\\*\\*53"):
        dash.mark(10**400, "x")
    assert dash.data()["marks"] == []


def test_a_failed_save_leaves_no_temporary_file(tmp_path: Path) -> None:
    """Guards the bug: when the rename failed, the hidden temporary file stayed beside the target."""
    dash = mt.Dashboard()
    dash.log(0, loss=1.0)
    (tmp_path / "report.html").mkdir()  # a folder where the file should go: the rename fails
    with pytest.raises(mt.DashboardError, match="failed") as caught:
        dash.save_html(tmp_path / "report.html")
    assert "hint:" in caught.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert not any((tmp_path / "report.html").iterdir())


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def _head(response: bytes) -> list[str]:
    return response.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")


@pytest.mark.slow
def test_http_request_line_over_the_limit_gets_414_and_head_events_gets_the_stream_headers() -> None:
    """Guards the bugs: a long request line was dropped without an answer; HEAD /events was a 404."""
    with mt.Dashboard(port=0) as dash:
        dash.log(0, loss=1.0)
        long_line = b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        assert _head(_raw(dash.port, long_line))[0] == "HTTP/1.1 414 URI Too Long"
        many_headers = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (b"X-A: " + b"b" * 1000 + b"\r\n") * 20 + b"\r\n"
        assert _head(_raw(dash.port, many_headers))[0] == "HTTP/1.1 431 Request Header Fields Too Large"
        head = _raw(dash.port, b"HEAD /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert head.endswith(b"\r\n\r\n") and _head(head)[0] == "HTTP/1.1 200 OK"
        with socket.create_connection(("127.0.0.1", dash.port), timeout=10) as sock:
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got:
                got += sock.recv(65536)
        assert _head(head) == _head(got)
        conn = http.client.HTTPConnection("127.0.0.1", dash.port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200  # still serving


@pytest.mark.slow
def test_a_blank_request_line_gets_400_and_a_leading_crlf_is_ignored() -> None:
    """Guards the bug: an empty line where the request line belongs crashed the connection handler
    (an IndexError, a traceback in the training terminal, nothing sent back); RFC 9112 (2.2) says a
    server should ignore an empty line received before the request line."""
    with mt.Dashboard(port=0) as dash:
        dash.log(0, loss=1.0)
        assert _head(_raw(dash.port, b"\r\n\r\n" * 8 + b"\r\n"))[0] == "HTTP/1.1 400 Bad Request"
        answer = _raw(dash.port, b"\r\nGET /data.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _head(answer)[0] == "HTTP/1.1 200 OK"
        assert answer.split(b"\r\n\r\n", 1)[1].startswith(b"{")
        conn = http.client.HTTPConnection("127.0.0.1", dash.port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200  # still serving


class _Broken:
    host, port, interval, version, finished = "127.0.0.1", 0, 0.05, 0, False

    def render(self, viewers: int | None = None) -> dict[str, object]:
        raise ValueError("a drawing bug")

    def data(self) -> dict[str, object]:
        return {}

    def html(self, live: bool = False) -> str:
        raise ValueError("a drawing bug")


def test_a_drawing_bug_is_shown_on_the_page_and_the_server_keeps_serving() -> None:
    async def main() -> tuple[dict[str, object], int, int]:
        server = Server(_Broken())
        await server.start()
        try:
            event = json.loads(server._event("update").decode().split("data: ", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", server.source.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status = int((await reader.readline()).split()[1])
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", server.source.port)
            writer.write(b"GET /data.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            after = int((await reader.readline()).split()[1])
            writer.close()
            return event, status, after
        finally:
            await server.close()

    event, status, after = asyncio.run(main())
    assert "could not be drawn: ValueError: a drawing bug" in str(event["status"]) and event["charts"] == {}
    assert (status, after) == (500, 200)


def test_leaving_async_with_after_hostile_data_works() -> None:
    async def main() -> bool:
        async with mt.Dashboard(port=0) as dash:
            _hostile(dash)
            await mt.next_frame()
        return dash.finished

    assert asyncio.run(main())


@pytest.mark.slow
def test_the_demo_switches_to_clipping_once_the_monitor_has_flagged_the_run_for_a_while() -> None:
    """Guards the bug: the unclipped run went on for a quarter of the steps, to losses of 1e148."""
    dash = mt.Dashboard(monitor=mt.GradientMonitor())
    asyncio.run(train_rnn(dash, steps=400))
    marks = dash.data()["marks"]
    assert isinstance(marks, list) and len(marks) == 1
    switch, label = marks[0]
    assert isinstance(switch, int) and label == "clipping on (weights reset)" and switch < 100
    assert dash.monitor is not None
    flagged = {int(f.split(":")[0].split()[1]) for f in dash.monitor.flags if "exploding" in f or "NaN" in f}
    assert len({s for s in flagged if s < switch}) == FLAGGED_STEPS


@pytest.mark.slow
def test_the_demo_finishes_3100_steps() -> None:
    """Guards the bug: the demo died of fsum's OverflowError near step 3100."""
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "dashboard", "--demo", "--port", "0", "--steps", "3100", "--delay", "0",
         "--exit-when-done"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("microtape dashboard: open http://127.0.0.1:") and "Traceback" not in result.stderr
