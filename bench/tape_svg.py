"""Workload 9: how long ``tape.to_svg()`` takes to lay out and draw a tape.

The issue that asked for ``to_svg()`` set the bound: a tape of 200 ops draws in
under a second. Two tapes, each drawn after ``gradient()`` (so the drawing also
replays the backward pass to show every gradient norm):

* **200 ops, wide**: 20 branches of ``tanh(h * w_i)`` over one watched input,
  summed (the tape of ``tests/views/test_tape_svg.py``); target < 1 s.
* **1,000 ops, deep**: a chain of ``tanh``/``mul``/``add`` with a constant read
  by every ``add`` (long edges: one dummy node per layer they cross);
  information only.

Time is the median of ``--repeat`` wall-clock runs (``time.perf_counter``):
the drawing is one call, short enough that batching would add nothing.

Run: ``python bench/tape_svg.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import statistics
import time

import microtape as mt
from _timing import Config, Row, fmt_time


def wide(branches: int = 20, depth: int = 4) -> mt.GradientTape:
    """``branches * (2 * depth + 1)`` ops, plus one: 200 with the defaults."""
    x = mt.tensor([0.5, -1.0, 2.0])
    ws = [mt.variable(mt.random_normal((3,), seed=i), name=f"w{i}") for i in range(branches)]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        total = mt.scalar(0.0)
        for i, w in enumerate(ws):
            h = x
            for _ in range(depth):
                h = mt.tanh(h * w)
            total = h.sum() if i == 0 else total + h.sum()
        total = total * 1.0
    _ = tape.gradient(total, x)
    return tape


def deep(ops: int) -> mt.GradientTape:
    """A chain of ``ops`` ops (a third each of tanh, mul, add), the add's constant read all along."""
    x, c = mt.scalar(0.3), mt.scalar(0.01)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        h = x
        for _ in range(ops // 3):
            h = mt.tanh(h) * 1.5 + c
    _ = tape.gradient(h, x)
    return tape


def _median_seconds(tape: mt.GradientTape, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        _ = tape.to_svg()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(cfg: Config) -> list[Row]:
    rows = []
    small = wide()
    n = len(small.operations)
    seconds = _median_seconds(small, cfg.reps)
    rows.append(Row(f"to_svg() of {n} ops (20 branches)", fmt_time(seconds), "-", None, "< 1 s", seconds < 1.0, None))
    big = deep(300 if cfg.quick else 1000)
    seconds = _median_seconds(big, cfg.reps)
    rows.append(Row(f"to_svg() of {len(big.operations)} ops (a chain)", fmt_time(seconds), "-", None, "-", None, None))
    return rows


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "tape_svg", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
