"""``python -m microtape dashboard --demo``: chapter 6's recurrent net, live in a browser.

The demo trains the book's 20-step recurrent
net with plain SGD at a learning rate that makes its gradients explode, then
starts again from the same weights with ``clip_by_global_norm``, feeding a
:class:`~microtape.Dashboard` at every step (and its Backward panel the
first step's backward pass). The loop awaits
:func:`~microtape.next_frame` after each step, which is what lets the page be
served while it trains, and it paces itself (``delay``) so a person can
watch.
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
import warnings
from collections.abc import Callable
from typing import Final, TextIO

from .page import Dashboard, DashboardError
from ..language import N_, tr
from ..debug.clipping import clip_by_global_norm
from ..debug.stats import GradientMonitor
from .next_frame import next_frame
from ..autodiff.functional import variable_grads
from ..autodiff.gradient_tape import GradientTape
from ..engine.memory import dispose, tidy
from ..ops import tanh
from ..ops.creation import random_normal, tensor, zeros
from ..engine.tensor import Tensor
from ..train import sgd
from ..engine.variable import Variable, variable
from ..engine import user_line

user_line.count_as_user(__file__)  # the demo is example code: reports and the Backward panel point at its lines

__all__ = ["demo", "train_rnn"]

T: Final = 20
HIDDEN: Final = 8
BATCH: Final = 16
LEARNING_RATE: Final = 0.3
CLIP: Final = 1.0
FLAGGED_STEPS: Final = 40  # exploding steps after which the unclipped run has made its point

USAGE: Final = N_("""\
The live training page for your own loop; save this as watch.py and run it
(python -m microtape dashboard --demo shows chapter 6's recurrent net instead):

import asyncio
import microtape as mt

x, y = mt.tensor([1.0, 2.0, 3.0, 4.0]), mt.tensor([1.0, 3.0, 5.0, 7.0])
w, b = mt.variable(mt.scalar(0.0), name="w"), mt.variable(mt.scalar(0.0), name="b")
opt = mt.train.sgd(0.05)


def loss():
    return ((w * x + b - y) ** 2).mean()


async def main():
    async with mt.Dashboard("my run", port=8765) as dash:    # serves http://127.0.0.1:8765/
        print("open", dash.url)
        for step in range(2000):
            def train_step():
                value, grads = mt.variable_grads(loss)
                opt.apply_gradients(grads)
                dash.log(step, loss=value, grads=grads, variables=[w, b])
            mt.tidy(train_step)                              # nothing piles up
            await mt.next_frame()                            # the page is served here
            await asyncio.sleep(0.01)                        # only so that you can watch
    dash.save_html("report.html")                            # the same charts, one file


asyncio.run(main())

A plain loop works too: `with mt.Dashboard() as dash:` serves from a background thread.
Pass monitor=mt.GradientMonitor(...) to draw its thresholds and show its flags.
""")


async def train_rnn(dash: Dashboard, steps: int, delay: float = 0.0, seed: int = 0) -> None:
    """Train the recurrent net for ``steps`` steps: first exploding, then clipped.

    The unclipped run ends once the monitor has flagged 40 of its steps as
    exploding (or NaN/Inf), and at a quarter of the steps at the latest;
    then the weights are reset and the clipped run takes the rest.

    Examples:
        >>> import asyncio
        >>> dash = mt.Dashboard(monitor=mt.GradientMonitor())
        >>> from microtape.dashboard.demo import train_rnn
        >>> asyncio.run(train_rnn(dash, steps=120))
        >>> dash.data()["marks"], dash.monitor.exploding
        ([[30, 'clipping on (weights reset)']], True)
    """
    rng = random.Random(seed)
    inputs = [tensor([rng.uniform(-1.0, 1.0) for _ in range(BATCH)], shape=(BATCH, 1)) for _ in range(T)]
    target = inputs[0]
    scale = 1 / math.sqrt(HIDDEN)
    start = [random_normal((HIDDEN, HIDDEN), stddev=scale, seed=2) * 2.0,
             random_normal((1, HIDDEN), seed=3), random_normal((HIDDEN, 1), stddev=scale, seed=4)]
    monitor = dash.monitor if dash.monitor is not None else GradientMonitor()

    def loss(w: Tensor, u: Tensor, v: Tensor) -> Tensor:
        h = zeros((BATCH, HIDDEN))
        for x_t in inputs:
            h = tanh(h @ w + x_t @ u)
        return ((h @ v - target) ** 2).mean()

    latest_switch = max(1, steps // 4)
    params: list[Variable] = []
    opt = sgd(LEARNING_RATE)
    clip, flagged = False, 0
    try:
        for step in range(steps):
            if step == 0 or (not clip and (flagged >= FLAGGED_STEPS or step >= latest_switch)):
                dispose(params)
                params = [variable(t, name=f"demo_{n}_{step}") for t, n in zip(start, "WUV")]
                if step:
                    clip = True
                    dash.mark(step, "clipping on (weights reset)")

            def one_step() -> tuple[Tensor, dict[str, Tensor]]:
                nonlocal flagged
                value, grads = variable_grads(lambda: loss(*params))
                raw = {n: grads[p] for n, p in zip("WUV", params)}
                new = monitor.record(raw)  # before clipping: the monitor sees the explosion
                if any("exploding" in flag or "NaN" in flag for flag in new):
                    flagged += 1
                gs: list[Tensor | None] = list(raw.values())
                if clip:
                    gs, _ = clip_by_global_norm(gs, CLIP)
                opt.apply_gradients(list(zip(gs, params)))
                return value, raw

            value, raw = tidy(one_step)
            dash.log(step, loss=value, grads=raw, variables=dict(zip("WUV", params)))
            if step == 0:  # the Backward panel: the first step's backward pass, one VJP a row
                tidy(lambda: show_backward(dash, loss, params))
            dispose([value, *raw.values()])
            await next_frame()
            if delay:
                await asyncio.sleep(delay)
    finally:
        opt.dispose()
        dispose(params)
        dispose([*start, *inputs])


def show_backward(dash: Dashboard, loss: Callable[..., Tensor], params: list[Variable]) -> None:
    """Log one backward pass of ``loss(*params)`` in the dashboard's Backward panel."""
    with GradientTape() as tape:
        value = loss(*params)
    dash.log_backward(tape.backward_steps(value, dict(zip("WUV", params))))


def demo(host: str = "127.0.0.1", port: int = 8765, steps: int = 400, delay: float = 0.03,
         keep_serving: bool = True, out: TextIO | None = None) -> int:
    """Serve the page while the recurrent net trains; Ctrl-C stops. Return the exit code."""
    stream = out if out is not None else sys.stdout

    async def main() -> None:
        dash = Dashboard(tr("microtape demo: chapter 6's recurrent net, exploding then clipped"),
                         monitor=GradientMonitor(), host=host, port=port)
        async with dash:
            print(tr("microtape dashboard: open {url} (Ctrl-C to stop)").format(url=dash.url), file=stream, flush=True)
            await train_rnn(dash, steps, delay)
            dash.finish()
            if keep_serving:
                print(tr("training finished after {steps} steps; the page stays up until Ctrl-C").format(steps=steps), file=stream, flush=True)
                await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("\n" + tr("stopped"), file=stream, flush=True)
    return 0


def main(run_demo: bool, host: str, port: int, steps: int, delay: float, keep_serving: bool, out: TextIO | None = None) -> int:
    """``python -m microtape dashboard [--demo ...]``: run the demo, or say how to use the API."""
    stream = out if out is not None else sys.stdout
    if not run_demo:
        print(tr(USAGE), file=stream)
        return 0
    if steps < 2 or delay < 0 or not 0 <= port <= 65535:
        print(tr("dashboard: --steps must be at least 2, --delay at least 0 and --port in 0..65535"), file=sys.stderr)
        return 2
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(tr("warning: serving on {host}: other machines may be able to open the page (it is read-only)").format(host=host), file=sys.stderr)
    try:
        with warnings.catch_warnings():  # said once above, in the terminal's words
            warnings.filterwarnings("ignore", "the training page will be served on", UserWarning)
            return demo(host, port, steps, delay, keep_serving, stream)
    except DashboardError as err:
        print(f"dashboard: {err}", file=sys.stderr)
        return 1
