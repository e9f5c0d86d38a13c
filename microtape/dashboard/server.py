"""The live page's HTTP server: asyncio streams, Server-Sent Events, nothing else.

``page.py`` starts it. One small server serves exactly four read-only
paths of one page source (a :class:`~microtape.Dashboard`): ``/`` (the page),
``/events`` (a Server-Sent Events stream of freshly drawn charts),
``/data.json`` (the recorded numbers) and ``/report.html`` (the page as a
self-contained report). It never opens a file, so there is nothing to
traverse to; every other path is a 404 and every method but GET and HEAD a
405; a request line over ``HEAD_LIMIT`` bytes gets 414 and headers over it
431. Nothing the page source holds can stop it: a chart that fails to draw
is reported on the page (or as a 500) and the server keeps serving. A ticker draws the charts at most every ``interval`` seconds, only
when something changed and somebody is watching, and writes the same bytes
to every viewer without waiting for any of them: a viewer that does not
read is dropped once its backlog passes ``MAX_BACKLOG``, so browsers
can neither stop nor slow the training loop.

It runs either in the caller's event loop (``async with``: served whenever
the training loop awaits ``next_frame``) or in a thread of its own that
runs a private event loop (``with``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import json
import math
import threading
import time
from collections.abc import Mapping
from typing import Final, Protocol

from .charts import SCRIPT
from ..errors import MicrotapeError, explain

__all__ = ["DashboardError", "PageSource", "Server", "json_safe"]

MAX_BACKLOG: Final = 1 << 20  # bytes queued for one viewer before it is dropped
MAX_CONNECTIONS: Final = 64
HEAD_LIMIT: Final = 16 * 1024  # request line and headers
HEAD_TIMEOUT: Final = 10.0
LEADING_BLANKS: Final = 8  # empty lines ignored before a request line (RFC 9112 asks for at least one)
KEEPALIVE: Final = 15.0  # seconds between comments on an idle event stream
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]", "::1")
_SCRIPT_HASH: Final = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CSP: Final = (
    f"default-src 'none'; script-src 'sha256-{_SCRIPT_HASH}'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The browser itself refuses any script but ours and any request to another origin."""
STREAM_HEAD: Final = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-store\r\n"
    b"X-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\n"
)
"""The event stream's status line and headers (``HEAD /events`` gets them too)."""


class PageSource(Protocol):
    """What the server serves: a :class:`~microtape.Dashboard`."""

    host: str
    port: int
    interval: float
    version: int
    finished: bool

    def render(self, viewers: int | None = None) -> Mapping[str, object]: ...
    def data(self) -> dict[str, object]: ...
    def html(self, live: bool = False) -> str: ...


class DashboardError(MicrotapeError, RuntimeError):
    """The live training page could not be served (port taken, address not available).

    Examples:
        >>> issubclass(mt.DashboardError, RuntimeError)
        True
    """


def json_safe(value: object) -> object:
    """``value`` with every non-finite float as a string, for strict JSON (``/data.json``).

    Examples:
        >>> from microtape.dashboard.server import json_safe
        >>> json_safe({"loss": [[0, float("nan")], [1, float("-inf")], [2, 0.5]]})
        {'loss': [[0, 'NaN'], [1, '-Infinity'], [2, 0.5]]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _response(status: str, ctype: str, body: bytes, head_only: bool = False, extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
        f"Content-Security-Policy: {CSP}\r\n{extra}Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + (b"" if head_only else body)


def _text(status: str, message: str, head_only: bool = False, extra: str = "") -> bytes:
    return _response(status, "text/plain; charset=utf-8", (message + "\n").encode(), head_only, extra)


async def _closed(writer: asyncio.StreamWriter) -> None:
    try:
        await writer.wait_closed()
    except (ConnectionError, OSError):
        pass


class Server:
    """Serve one page source over HTTP on ``source.host:source.port`` (0 picks a free port)."""

    def __init__(self, source: PageSource) -> None:
        self.source = source
        self.viewers: int = 0
        self._streams: set[asyncio.StreamWriter] = set()
        self._connections: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._cache: tuple[int, int, bytes] | None = None  # (version, viewers, event bytes)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.requests: int = 0
        self.busy: float = 0.0  # CPU seconds spent drawing and pushing updates (bench/dashboard.py reports it)

    # -- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and start answering in the running event loop."""
        try:
            self._server = await asyncio.start_server(self._handle, self.source.host, self.source.port, limit=HEAD_LIMIT)
        except OSError as err:
            raise DashboardError(
                explain(
                    f"cannot serve the training page on {self.source.host}:{self.source.port}: {err.strerror or err}.",
                    "The port must be free and the address one of this machine's.",
                    "pick another port, or port=0 for any free one (read it back from dash.url)",
                ),
                host=self.source.host,
                port=self.source.port,
            ) from None
        self.source.port = self._server.sockets[0].getsockname()[1]
        self._loop = asyncio.get_running_loop()
        self._ticker = asyncio.create_task(self._tick())

    async def close(self) -> None:
        """Send the final charts with a ``done`` event, then close every connection and the socket."""
        if self._ticker is not None:
            self._ticker.cancel()
            try:
                await self._ticker
            except asyncio.CancelledError:
                pass
        if self._streams:
            final = self._event("done")
            for writer in list(self._streams):
                self._send(writer, final)
        writers = list(self._connections)
        for writer in writers:
            writer.close()
        if self._server is not None:
            self._server.close()
        if writers:  # let the final bytes go out before the caller's loop ends
            await asyncio.wait([asyncio.ensure_future(_closed(w)) for w in writers], timeout=1.0)
        self._streams.clear()

    def start_thread(self) -> None:
        """Serve from a daemon thread running its own event loop; return once listening."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as err:  # noqa: BLE001 - handed to the caller's thread below
                failure.append(err)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.close())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="microtape-dashboard", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            self._thread.join()
            raise failure[0]

    def stop_thread(self) -> None:
        """Stop the thread started by :meth:`start_thread` (final charts first)."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    # -- pushing charts ------------------------------------------------------------------------

    def _event(self, name: str) -> bytes:
        key = (self.source.version, self.viewers)
        if name == "update" and self._cache is not None and self._cache[:2] == key:
            return self._cache[2]
        try:
            payload = json.dumps(self.source.render(viewers=self.viewers), separators=(",", ":"), allow_nan=False)
        except Exception as err:  # noqa: BLE001 - a drawing bug must not freeze the page: say it, keep serving
            status = html.escape(f"the charts could not be drawn: {type(err).__name__}: {err}"[:300])
            payload = json.dumps({"charts": {}, "status": status, "flags": "", "flags_calm": True})
        event = f"event: {name}\ndata: {payload}\n\n".encode()
        if name == "update":
            self._cache = (key[0], key[1], event)
        return event

    def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        """Queue bytes for one viewer without waiting; drop a viewer that stopped reading."""
        if writer.is_closing() or writer.transport.get_write_buffer_size() > MAX_BACKLOG:
            self._drop(writer)
            return
        writer.write(data)

    def _drop(self, writer: asyncio.StreamWriter) -> None:
        if writer in self._streams:
            self._streams.discard(writer)
            self.viewers = len(self._streams)
        writer.close()

    async def _tick(self) -> None:
        sent_version, idle = -1, 0.0
        while True:
            await asyncio.sleep(self.source.interval)
            if not self._streams:
                continue
            started = time.process_time()
            if self.source.version != sent_version or (self._cache is not None and self._cache[1] != self.viewers):
                sent_version = self.source.version
                data, idle = self._event("update"), 0.0
            else:
                idle += self.source.interval
                if idle < KEEPALIVE:
                    continue
                data, idle = b": still here\n\n", 0.0
            for writer in list(self._streams):
                self._send(writer, data)
            self.busy += time.process_time() - started

    # -- answering requests --------------------------------------------------------------------

    def _host_ok(self, headers: dict[str, str]) -> bool:
        """On a loopback address, accept only requests that name it (a DNS-rebinding guard)."""
        if self.source.host not in ("127.0.0.1", "localhost", "::1"):
            return True
        host = headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.lower() in LOOPBACK_NAMES

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= MAX_CONNECTIONS:
            writer.write(_text("503 Service Unavailable", "too many connections"))
            writer.close()
            return
        self._connections.add(writer)
        try:
            await self._answer(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError):
            pass
        finally:
            self._connections.discard(writer)
            if writer in self._streams:
                self._drop(writer)
            writer.close()

    async def _read_head(self, reader: asyncio.StreamReader) -> list[str] | bytes:
        """The request line and header lines, or the error response for a head over ``HEAD_LIMIT``."""
        try:
            first = await reader.readuntil(b"\r\n")
            for _ in range(LEADING_BLANKS):  # RFC 9112, 2.2: ignore empty lines before the request line
                if first != b"\r\n":
                    break
                first = await reader.readuntil(b"\r\n")
        except asyncio.LimitOverrunError:
            return _text("414 URI Too Long", f"the request line is over {HEAD_LIMIT} bytes")
        if first == b"\r\n":
            return _text("400 Bad Request", "no request line, only empty lines")
        lines = [first]
        size = len(lines[0])
        while lines[-1] != b"\r\n":
            try:
                lines.append(await reader.readuntil(b"\r\n"))
            except asyncio.LimitOverrunError:
                size = HEAD_LIMIT + 1
            size += len(lines[-1])
            if size > HEAD_LIMIT:
                return _text("431 Request Header Fields Too Large", f"the request's headers are over {HEAD_LIMIT} bytes")
        return [line[:-2].decode("latin-1") for line in lines[:-1]]

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: bytes) -> None:
        """Answer a request too large to read, then drain a little of it so the answer is not lost to a reset."""
        writer.write(response)
        await writer.drain()

        async def drain_input() -> None:
            for _ in range(16):
                if not await reader.read(1 << 16):
                    return

        with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
            await asyncio.wait_for(drain_input(), 1.0)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(self._read_head(reader), HEAD_TIMEOUT)
        self.requests += 1
        if isinstance(head, bytes):
            await self._refuse(reader, writer, head)
            return
        lines = head
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            writer.write(_text("400 Bad Request", "bad request line"))
            return
        method, target, _ = parts
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        head_only = method == "HEAD"
        if not self._host_ok(headers):
            writer.write(_text("403 Forbidden", "this page answers only to 127.0.0.1 and localhost", head_only))
            return
        if method not in ("GET", "HEAD"):
            writer.write(_text("405 Method Not Allowed", "read-only: only GET and HEAD", extra="Allow: GET, HEAD\r\n"))
            return
        path = target.split("?", 1)[0].split("#", 1)[0]
        try:
            response = self._page(path, head_only)
        except Exception as err:  # noqa: BLE001 - a drawing bug answers 500 and the server keeps serving
            response = _text("500 Internal Server Error", f"the page could not be drawn: {type(err).__name__}: {err}"[:300], head_only)
        if response is not None:
            writer.write(response)
        elif head_only:  # HEAD /events: the stream's headers, no stream
            writer.write(STREAM_HEAD)
        else:
            await self._stream(reader, writer)

    def _page(self, path: str, head_only: bool) -> bytes | None:
        """The response for ``path``, or None for the event stream."""
        if path in ("/", "/index.html"):
            return _response("200 OK", "text/html; charset=utf-8", self.source.html(live=True).encode(), head_only)
        if path == "/report.html":
            return _response("200 OK", "text/html; charset=utf-8", self.source.html().encode(), head_only,
                             'Content-Disposition: inline; filename="training-report.html"\r\n')
        if path == "/data.json":
            body = json.dumps(json_safe(self.source.data()), allow_nan=False).encode()
            return _response("200 OK", "application/json", body, head_only)
        if path == "/events":
            return None
        return _text("404 Not Found", "not found: this server serves only its training page", head_only)

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + b"retry: 1000\n\n")
        self._streams.add(writer)
        self.viewers = len(self._streams)
        self._send(writer, self._event("done" if self.source.finished else "update"))
        while not writer.is_closing():  # a viewer sends nothing more; EOF means it left
            if not await reader.read(1024):
                break
