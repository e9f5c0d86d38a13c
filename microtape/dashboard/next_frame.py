"""``next_frame``: let other asyncio tasks run between training steps.

Read last in this folder; nothing else here uses it. In a browser, ``await tf.nextFrame()`` lets the
page redraw between steps of a training loop so it stays responsive. The
Python analogue is an asyncio program: a training coroutine that awaits
:func:`next_frame` after each step gives the event loop a turn, so a
progress printer, a web server or a second training task keeps running.

Use ``tidy`` around each synchronous step, never around the coroutine
itself: ``tidy`` cannot scope tensors that are made after it returns (it
refuses a coroutine function and says so).
"""

from __future__ import annotations

import asyncio

__all__ = ["next_frame"]


async def next_frame() -> None:
    """Yield control to the asyncio event loop once (``tf.nextFrame()`` in TF.js).

    Every other task that is ready runs before this one continues. Await it
    between training steps so a long loop does not starve the rest of the
    program. It does nothing else: no waiting for a display refresh, no
    tensors made or freed.

    Returns:
        None, after one turn of the event loop.

    Examples:
        A training loop that reports its progress between steps, next to a
        second task that gets a turn after every step:

        >>> import asyncio
        >>> async def train(log):
        ...     x = mt.tensor([1.0, 2.0, 3.0, 4.0])
        ...     y = mt.tensor([1.0, 3.0, 5.0, 7.0])
        ...     w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))
        ...     opt = mt.train.sgd(0.1)
        ...     for step in range(300):
        ...         loss = opt.minimize(lambda: ((w * x + b - y) ** 2).mean(), return_cost=True)
        ...         if step % 100 == 0:
        ...             log.append(f"step {step}: loss {loss.item():.4f}")
        ...         loss.dispose()
        ...         await mt.next_frame()           # let the printer run
        ...     log.append(f"done: w={w.item():.2f} b={b.item():.2f}")
        >>> async def printer(log, done):
        ...     while not done.is_set() or log:
        ...         while log:
        ...             print(log.pop(0))
        ...         await mt.next_frame()
        >>> async def main():
        ...     log, done = [], asyncio.Event()
        ...     watcher = asyncio.create_task(printer(log, done))
        ...     await train(log)
        ...     done.set()
        ...     await watcher
        >>> asyncio.run(main())
        step 0: loss 21.0000
        step 100: loss 0.0009
        step 200: loss 0.0000
        done: w=2.00 b=-1.00
    """
    await asyncio.sleep(0)  # sleep(0) is asyncio's documented way to yield once
