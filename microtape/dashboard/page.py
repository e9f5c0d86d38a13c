"""A live training page: loss, gradient norms, update ratios, histograms and tensor counts.

A :class:`Dashboard` checks what a
training loop hands it with ``Dashboard.log`` and keeps it in a
``Recording`` (``recording.py``: bounded series, old points thinned, so a
long run takes bounded memory), draws it as SVG charts (``render.py`` with
``charts.py``), and, while it is open as a context manager, serves them on
127.0.0.1 with Server-Sent Events (``server.py``). In an ``async with`` block
the server runs in the training loop's own asyncio event loop, so the page is
answered exactly when the loop awaits :func:`~microtape.next_frame`: the
Python twin of ``tf.nextFrame()`` keeping a browser page responsive. In a
plain ``with`` block a background thread serves it instead.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, cast

from . import charts
from .log_args import named_grads, named_variables, short_repr
from .backward_panel import rows_of
from .recording import Recording
from .render import FOOT, Rendered, draw, numbers
from ..language import tr
from .server import DashboardError, Server
from ..engine.types import is_int, is_number
from ..debug.stats import GradientMonitor
from ..errors import InvalidArgumentError, explain
from ..engine.memory import memory
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..explain.steps import BackwardStep

__all__ = ["Dashboard", "DashboardError"]

LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
MAX_STEP: Final = 2**53  # steps and counts beyond this are not exact as floats (the charts, JavaScript)


class Dashboard:
    """Watch a training run live in a browser, or save its charts as one HTML file.

    Feed it once per step with :meth:`log`. The page shows the loss (log
    scale), each variable's gradient norm with the exploding and vanishing
    thresholds of a :class:`~microtape.GradientMonitor` marked, the ratio of
    each update to its weight, histograms of the latest gradients (of the
    variables with more than one entry) and the run's live tensors per step,
    ``memory().num_tensors`` less those alive when the dashboard was made
    (a leak shows as a ramp). Nothing is
    served until the dashboard is opened:

    * ``async with mt.Dashboard() as dash:`` serves from the running asyncio
      event loop, answering browsers whenever the loop awaits
      :func:`~microtape.next_frame` (``tf.nextFrame()`` in TF.js);
    * ``with mt.Dashboard() as dash:`` serves from a background thread, for a
      plain synchronous loop.

    The server binds 127.0.0.1 unless ``host`` says otherwise (and then
    warns), serves only its page, its event stream and its data (every
    other path is a 404, nothing is read from disk, nothing it serves changes
    training), and keeps at most ``max_points`` points per series, halving
    the resolution of old points when full. TensorBoard and tfjs-vis are the
    big siblings of this page.

    Args:
        title: The page's heading.
        monitor: A ``GradientMonitor`` whose thresholds are drawn and whose
            flags are shown; if :meth:`log` gets no ``grads``, the norms the
            monitor recorded since the last call are used.
        host: Address to bind; 127.0.0.1 (this machine only) by default.
        port: TCP port; 0 picks a free one (read it back from :attr:`url`).
        max_points: Points kept per series (at least 16).
        interval: Seconds between pushes to the browsers (twice a second by default).

    Examples:
        A synchronous loop, recorded and saved (nothing is served until the
        dashboard is opened with ``with`` or ``async with``):

        >>> import tempfile, pathlib
        >>> w = mt.variable(mt.scalar(0.0), name="dash_doc_w")
        >>> x, y = mt.tensor([1.0, 2.0]), mt.tensor([2.0, 4.0])
        >>> opt, dash = mt.train.sgd(0.1), mt.Dashboard("a tiny fit")
        >>> for step in range(20):
        ...     value, grads = mt.variable_grads(lambda: ((w * x - y) ** 2).mean())
        ...     opt.apply_gradients(grads)
        ...     dash.log(step, loss=value, grads=grads, variables=[w])
        ...     mt.dispose([value, *grads.values()])
        >>> dash
        Dashboard('a tiny fit', 20 steps logged, not serving)
        >>> path = dash.save_html(pathlib.Path(tempfile.mkdtemp()) / "report.html")
        >>> text = path.read_text()
        >>> text.count("<svg"), "loss" in text, "gradient" in text, "tensors" in text
        (5, True, True, True)

        Served while an asyncio loop trains (port 0 picks a free port, and the
        server closes when the block ends):

        >>> import asyncio
        >>> async def main():
        ...     async with mt.Dashboard(port=0) as dash:
        ...         for step in range(3):
        ...             dash.log(step, loss=1.0 / (step + 1))
        ...             await mt.next_frame()   # the page is answered here
        ...         return dash.url.startswith("http://127.0.0.1:")
        >>> asyncio.run(main())
        True
    """

    def __init__(
        self,
        title: str = "microtape training",
        *,
        monitor: GradientMonitor | None = None,
        host: str = "127.0.0.1",
        port: int = 8765,
        max_points: int = 512,
        interval: float = 0.5,
    ) -> None:
        problems = []
        if not isinstance(cast(object, title), str):
            problems.append(f"title={title!r} is not a str")
        if not is_int(port) or not 0 <= port <= 65535:
            problems.append(f"port={port!r} is not an int in 0..65535")
        if not is_int(max_points) or max_points < 16:
            problems.append(f"max_points={max_points!r} is not an int >= 16")
        if not is_number(interval) or not 0 < interval <= 60:
            problems.append(f"interval={interval!r} is not a number of seconds in (0, 60]")
        if not isinstance(cast(object, monitor), (GradientMonitor, type(None))):
            problems.append(f"monitor={monitor!r} is not a GradientMonitor")
        if not isinstance(cast(object, host), str) or not host:
            problems.append(f"host={host!r} is not an address")
        if problems:
            raise InvalidArgumentError(
                explain(
                    "Dashboard(...): " + "; ".join(problems) + ".",
                    "port 0 picks a free port; max_points bounds the memory of long runs.",
                    'mt.Dashboard("my run", port=8765)',
                ),
                problems=problems,
            )
        defaults = monitor if monitor is not None else GradientMonitor()
        self.title = title
        self.monitor = monitor
        self.host = host
        self.port = port
        self.max_points = max_points
        self.interval: float = float(interval)
        self.explode_norm: float = defaults.explode_norm
        self.vanish_norm: float = defaults.vanish_norm
        self._lock = threading.Lock()
        self._run = Recording(max_points, monitor)
        self._run.tensors_before = memory().num_tensors
        self.version: int = 0
        self.finished: bool = False
        self._server: Server | None = None

    # -- feeding ------------------------------------------------------------------------

    def log(
        self,
        step: int | None = None,
        *,
        loss: float | Tensor | None = None,
        grads: object = None,
        variables: Sequence[Variable] | Mapping[str, Tensor] | None = None,
        tensors: int | None = None,
    ) -> None:
        """Record one training step.

        Args:
            step: The step number; by default one more than the last. Steps must increase.
            loss: The loss, a number or a one-element tensor.
            grads: This step's gradients: ``variable_grads(...).grads``, a
                list from ``grads``/``tape.gradient``, a dict, or
                ``(gradient, variable)`` pairs. Their norms are charted and
                their values drawn as histograms (the latest step only).
            variables: The trained variables (after the update): each one's
                change since the previous call, divided by its size, is its
                update-to-weight ratio.
            tensors: The live tensor count to chart; by default the run's own,
                ``memory().num_tensors`` less the count when the dashboard was made.

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.log(0, loss=mt.scalar(2.0), grads={"w": mt.tensor([3.0, 4.0])})
            >>> dash.log(loss=1.0, grads={"w": mt.tensor([0.3, 0.4])})
            >>> dash.data()["grad_norm"]["w"]
            [[0, 5.0], [1, 0.5]]
            >>> try:
            ...     dash.log(1, loss=0.5)
            ... except mt.InvalidArgumentError as err:
            ...     print(err.message.splitlines()[0])
            Dashboard.log(step=1): steps must increase, and the last one logged was 1.
        """
        # Validate and read everything first: a failed call records nothing.
        if step is None:
            step = 0 if self._run.last_step is None else self._run.last_step + 1
        if is_int(step) and abs(step) >= MAX_STEP:
            raise InvalidArgumentError(
                explain(
                    f"Dashboard.log(step={short_repr(step)}): a step must be below 2**53 in size.",
                    "The charts and the page's JavaScript count steps as floats, exact only up to 2**53.",
                    "pass the loop's counter, or leave step out to count 0, 1, 2, ...",
                ),
                step=step,
            )
        if not is_int(step) or (self._run.last_step is not None and step <= self._run.last_step):
            raise InvalidArgumentError(
                explain(
                    f"Dashboard.log(step={short_repr(step)}): steps must increase, and the last one logged was {self._run.last_step}.",
                    "Each call records one step, an int below 2**53; the charts' x axis is the step.",
                    "leave step out to count 0, 1, 2, ... or pass the loop's counter; "
                    'mark a new phase with dash.mark(step, "clipping on").',
                ),
                step=step,
            )
        loss_value: float | None = None
        if loss is not None:
            if isinstance(loss, Tensor):
                if loss.size != 1:
                    raise InvalidArgumentError(
                        explain(
                            f"Dashboard.log(loss=...) got a tensor of shape {loss.shape}; a loss is one number.",
                            "The loss chart draws one value per step.",
                            "reduce it first: dash.log(step, loss=loss.mean())",
                        ),
                        shape=loss.shape,
                    )
                loss_value = loss.item()
            elif is_number(loss):
                try:
                    loss_value = float(loss)
                except OverflowError:  # an int beyond the float range, as IEEE rounds it
                    loss_value = math.inf if loss > 0 else -math.inf
            else:
                raise InvalidArgumentError(
                    explain(
                        f"Dashboard.log(loss={short_repr(loss)}) is not a number or a tensor.",
                        "The loss chart draws one number per step.",
                        "dash.log(step, loss=value)",
                    ),
                    value=loss,
                )
        if tensors is not None and (not is_int(tensors) or not 0 <= tensors < MAX_STEP):
            raise InvalidArgumentError(
                explain(
                    f"Dashboard.log(tensors={short_repr(tensors)}) is not a count of tensors.",
                    "tensors is an int from 0 to 2**53, charted per step; leave it out for memory().num_tensors.",
                    "dash.log(step, loss=value, tensors=mt.memory().num_tensors)",
                ),
                value=tensors,
            )
        named = named_grads(grads) if grads is not None else []
        grad_data = {name: t.data_sync() for name, t in named}
        weights = {name: t.data_sync() for name, t in named_variables(variables)} if variables is not None else {}
        with self._lock:
            before = self._run.tensors_before
            if tensors is not None:
                self._run.tensors_before = None  # the caller counts: chart its numbers as they are
            count = tensors if tensors is not None else memory().num_tensors - (before or 0)
            self._run.add(step, loss_value, grad_data, weights, count, (self.explode_norm, self.vanish_norm))
            self.version += 1

    def log_backward(self, steps: Iterable[BackwardStep]) -> None:
        """Show the steps of one backward pass (``tape.backward_steps(...)``) in the page's Backward panel.

        Examples:
            >>> x, dash = mt.scalar(2.0), mt.Dashboard()
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x); y = x * x
            >>> dash.log_backward(tape.backward_steps(y, x))
            >>> dash.data()["backward"]["rows"][0]["accumulated"]
            'source: 4.0'
        """
        rows, total = rows_of(steps)
        with self._lock:
            self._run.backward, self._run.backward_total, self._run.backward_step = rows, total, self._run.last_step
            self.version += 1

    def mark(self, step: int, label: str) -> None:
        """Draw a labelled vertical line at ``step`` on every step chart (a new phase, a changed learning rate).

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.mark(100, "clipping on")
            >>> dash.data()["marks"]
            [[100, 'clipping on']]
        """
        if not is_int(step) or abs(step) >= MAX_STEP or not isinstance(cast(object, label), str):
            raise InvalidArgumentError(
                explain(
                    f"Dashboard.mark({short_repr(step)}, {short_repr(label)}): expected an int step below 2**53 and a str label.",
                    "A mark is a labelled vertical line at one step.",
                    'dash.mark(100, "clipping on")',
                )
            )
        with self._lock:
            self._run.marks.append((step, label))
            self.version += 1

    def finish(self) -> None:
        """Say that training has ended: the page shows it. Leaving a ``with`` block does this too.

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.finish()
            >>> "training finished" in dash.render()["status"]
            True
        """
        with self._lock:
            self.finished = True
            self.version += 1

    # -- reading ------------------------------------------------------------------------

    def data(self) -> dict[str, object]:
        """The recorded series as plain lists (what ``/data.json`` serves).

        Values are Python floats, NaN and Inf included. ``/data.json`` is
        strict JSON, which has no NaN or Infinity: there a non-finite number
        is the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (what
        JavaScript's ``Number()`` reads back).

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.log(0, loss=1.5, tensors=7)
            >>> d = dash.data()
            >>> d["loss"], d["tensors"], d["steps_logged"]
            ([[0, 1.5]], [[0, 7.0]], 1)
        """

        with self._lock:
            snap, finished = self._run.snapshot(), self.finished
        return numbers(snap, self.title, finished, self.explode_norm, self.vanish_norm)

    @property
    def steps_logged(self) -> int:
        """How many steps :meth:`log` has recorded.

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.log(loss=1.0); dash.log(loss=0.5)
            >>> dash.steps_logged
            2
        """
        return self._run.steps_logged

    def num_points(self) -> int:
        """How many points all series hold together (bounded by ``max_points`` per series).

        Examples:
            >>> dash = mt.Dashboard(max_points=16)
            >>> for step in range(1000):
            ...     dash.log(step, loss=1.0, tensors=3)
            >>> dash.num_points() <= 2 * 16      # loss and tensors, thinned
            True
        """
        with self._lock:
            return self._run.num_points()

    def render(self, viewers: int | None = None) -> Rendered:
        """Draw every chart now: ``{"charts": {id: svg}, "status": html, "flags": text, "flags_calm": bool, "backward": html}``.

        This is what the event stream sends; ``viewers`` adds their count to the status line.

        Examples:
            >>> dash = mt.Dashboard()
            >>> dash.log(0, loss=1.0)
            >>> sorted(dash.render()["charts"])
            ['grads', 'hist', 'loss', 'ratio', 'tensors']
        """
        with self._lock:
            snap, finished = self._run.snapshot(), self.finished
        return draw(snap, self.explode_norm, self.vanish_norm, finished, viewers)

    def html(self, live: bool = False) -> str:
        """The whole page as HTML text: the report :meth:`save_html` writes, or with ``live`` the served page.

        The live page adds one small inline script that follows the event stream.

        Examples:
            >>> dash = mt.Dashboard()
            >>> "<script" in dash.html(), "<script" in dash.html(live=True)
            (False, True)
        """
        r = self.render()
        return charts.page(self.title, r["status"], r["flags"], r["flags_calm"], r["charts"], tr(FOOT), live, r["backward"])

    def save_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the charts as one self-contained HTML file (no script, no external asset); return its path.

        The file is written next to its final name and then renamed, so a
        reader never sees half a report.

        Examples:
            >>> import tempfile, pathlib
            >>> dash = mt.Dashboard("saved")
            >>> dash.log(0, loss=1.0)
            >>> p = dash.save_html(pathlib.Path(tempfile.mkdtemp()) / "run.html")
            >>> p.read_text().startswith("<!DOCTYPE html>"), "<script" in p.read_text()
            (True, False)
        """
        target = Path(path)
        if not target.parent.is_dir():
            raise DashboardError(
                explain(
                    f"save_html({str(path)!r}): the folder {str(target.parent)!r} does not exist.",
                    "save_html writes one file and creates no folders.",
                    "create it first: pathlib.Path(folder).mkdir(parents=True, exist_ok=True)",
                ),
                path=str(path),
            )
        text = self.html()
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        except OSError as err:
            tmp.unlink(missing_ok=True)  # a failed save leaves nothing behind
            raise DashboardError(
                explain(
                    f"save_html({str(path)!r}) failed: {err.strerror or err}.",
                    "save_html writes a temporary file beside the target, then renames it over the target.",
                    "pass the path of a file (not a folder) in a folder you can write to",
                ),
                path=str(path),
            ) from err
        return target

    def _repr_html_(self) -> str:
        """The same charts as :meth:`save_html`, for Jupyter and the book."""
        r = self.render()
        return charts.report(self.title, r["status"], r["flags"], r["flags_calm"], r["charts"], tr(FOOT), r["backward"])

    def __repr__(self) -> str:
        serving = f"serving {self.url}" if self._server is not None else "not serving"
        return f"Dashboard({self.title!r}, {self._run.steps_logged} steps logged, {serving})"

    # -- serving -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The page's address (with the real port once serving).

        Examples:
            >>> mt.Dashboard(port=8765).url
            'http://127.0.0.1:8765/'
        """
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)  # every address: open it here
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def _make_server(self) -> Server:
        if self._server is not None:
            raise DashboardError(
                explain(f"this Dashboard is already serving {self.url}.", "Open a dashboard once.", "use one `with` block per dashboard")
            )
        if self.host not in LOOPBACK:
            warnings.warn(
                f"the training page will be served on {self.host}:{self.port}, where other machines may reach it "
                "(it is read-only, but shows your run); the default 127.0.0.1 keeps it on this machine",
                UserWarning,
                stacklevel=3,
            )
        return Server(self)

    async def __aenter__(self) -> Dashboard:
        server = self._make_server()
        await server.start()
        self._server = server
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        server, self._server = self._server, None
        self.finish()
        if server is not None:
            await server.close()

    def __enter__(self) -> Dashboard:
        server = self._make_server()
        server.start_thread()
        self._server = server
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        server, self._server = self._server, None
        self.finish()
        if server is not None:
            server.stop_thread()

    @property
    def viewers(self) -> int:
        """How many browsers follow the live page now (0 when not serving).

        Examples:
            >>> mt.Dashboard().viewers
            0
        """
        return 0 if self._server is None else self._server.viewers
