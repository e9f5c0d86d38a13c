"""Workload 6: 10,000 training steps inside ``mt.tidy``: nothing may pile up.

The model is the book's linear regression (x = [1, 2, 3, 4], y = [1, 3, 5, 7],
loss = mean((w x + b - y)²)). Each step runs in ``mt.tidy``; it uses
``mt.train.sgd(...).minimize`` when the optimizer module is there and works,
else ``variable_grads`` and ``assign_sub``. We sample ``mt.memory().num_tensors``
every 1,000 steps (it must be constant: asserted) and the memory Python holds
(tracemalloc's current size after ``gc.collect()``) at steps 1,000 and 10,000:
flat means under 1 byte per step of growth.

Run: ``python bench/tidy_loop.py [--quick]``.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable

import microtape as mt
from _timing import Config, Row, fmt_bytes, fmt_time

LR = 0.01


def make_step() -> tuple[Callable[[], object], str, Callable[[], None]]:
    """(one tidy step, how it updates, cleanup)."""
    x = mt.keep(mt.tensor([1.0, 2.0, 3.0, 4.0]))
    y = mt.keep(mt.tensor([1.0, 3.0, 5.0, 7.0]))
    w = mt.variable(mt.scalar(0.0))
    b = mt.variable(mt.scalar(0.0))

    def loss() -> mt.Tensor:
        return mt.square(w * x + b - y).mean()

    def cleanup() -> None:
        mt.dispose([x, y, w, b])

    train = getattr(mt, "train", None)
    if train is not None:
        try:
            opt = train.sgd(LR)
            mt.tidy(lambda: opt.minimize(loss))
            assert w.item() != 0.0
        except Exception:  # noqa: BLE001 - an unfinished optimizer module: fall back
            pass
        else:

            def sgd_step() -> object:
                return mt.tidy(lambda: opt.minimize(loss))

            return sgd_step, "mt.train.sgd(...).minimize", cleanup

    def manual() -> None:
        value, grads = mt.variable_grads(loss)
        w.assign_sub(grads[w] * LR)
        b.assign_sub(grads[b] * LR)

    def manual_step() -> object:
        mt.tidy(manual)
        return None

    return manual_step, "variable_grads + assign_sub", cleanup


def run(cfg: Config) -> list[Row]:
    steps, every = (200, 20) if cfg.quick else (10_000, 1_000)
    step, how, cleanup = make_step()
    counts: list[int] = []
    early = 0
    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        for i in range(1, steps + 1):
            step()
            if i % every == 0:
                counts.append(mt.memory().num_tensors)
                if i == every:
                    gc.collect()
                    early = tracemalloc.get_traced_memory()[0]
        gc.collect()
        late = tracemalloc.get_traced_memory()[0]
        seconds = time.perf_counter() - start
    finally:
        tracemalloc.stop()
        cleanup()
    assert len(set(counts)) == 1, f"num_tensors changed during training: {counts}"
    per_step = (late - early) / (steps - every)
    label = f"{steps:,} steps in tidy ({how})"
    return [
        Row(
            f"{label}: num_tensors",
            f"{counts[0]} at step {every:,} ... {counts[-1]} at {steps:,}",
            "-",
            None,
            "constant",
            True,
        ),
        Row(
            f"{label}: traced memory",
            f"{fmt_bytes(early)} -> {fmt_bytes(late)} ({per_step:+.2f} B/step)",
            f"({fmt_time(seconds / steps)}/step traced)",
            None,
            "flat (< 1 B/step)",
            per_step < 1.0,
        ),
    ]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "tidy", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
