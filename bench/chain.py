"""Workloads 2 and 3: a long chain of scalar ops, forward + backward.

The chain repeats ``mul 2, add 1e-3, add -1e-3, mul 0.5`` (twice), ``add 0``
and a ``tanh``: 4 muls, 5 adds and a tanh in every ten ops, and values and
gradients stay in a normal float range for a million ops. microtape records it on a ``GradientTape`` (inside ``tidy``, so
each run frees what it made); the baseline is the smallest tape plain Python
allows: a list of values, a list of ``(output index, backward closure)`` and
a reversed loop. That is the floor any tape-based autodiff pays per op; the
ratio is microtape's bookkeeping (tensor objects, op table, arena, records).

Workload 3 runs a million ops: time ratio, the same with the cyclic garbage
collector disabled on both sides (at this size full collections, which walk
every live GC-tracked object, take most of the baseline's time), and the peak
memory ratio measured with tracemalloc (exact for pure Python; see
``_timing.peak_bytes``).

Run: ``python bench/chain.py [--quick] [--repeat N]`` (``--only chain1m`` in run.py for the long one).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable

import microtape as mt
from _timing import Config, Row, compare, fmt_bytes, fmt_time, peak_bytes, ratio_row

X0 = 0.5


PATTERN: tuple[tuple[str, float], ...] = (
    ("mul", 2.0), ("add", 1e-3), ("add", -1e-3), ("mul", 0.5),
    ("mul", 2.0), ("add", 1e-3), ("add", -1e-3), ("mul", 0.5),
    ("add", 0.0), ("tanh", 0.0),
)
"""Nine ops that leave the value as it was (up to rounding), then a tanh: values shrink slowly
(tanh iterated decays like sqrt(3 / 2k)) and the gradient stays a normal float."""


def op_at(i: int) -> tuple[str, float]:
    """The i-th op of the chain."""
    return PATTERN[i % len(PATTERN)]


def program(n: int) -> list[tuple[str, float]]:
    """The whole chain, made once so both sides run the same op list with no branching cost of their own."""
    return [op_at(i) for i in range(n)]


# -- the baseline: a minimal closure-based tape --------------------------------


class MiniTape:
    """Values in a list; each op appends ``(output index, backward closure)``."""

    __slots__ = ("values", "grads", "records")

    def __init__(self) -> None:
        self.values: list[float] = []
        self.grads: list[float] = []
        self.records: list[tuple[int, Callable[[float], None]]] = []

    def leaf(self, v: float) -> int:
        self.values.append(v)
        return len(self.values) - 1

    def mul(self, i: int, c: float) -> int:
        values, grads = self.values, self.grads
        o = len(values)
        values.append(values[i] * c)

        def back(dout: float) -> None:
            grads[i] += dout * c

        self.records.append((o, back))
        return o

    def add(self, i: int, c: float) -> int:
        values, grads = self.values, self.grads
        o = len(values)
        values.append(values[i] + c)

        def back(dout: float) -> None:
            grads[i] += dout

        self.records.append((o, back))
        return o

    def tanh(self, i: int) -> int:
        values, grads = self.values, self.grads
        o = len(values)
        out = math.tanh(values[i])
        values.append(out)

        def back(dout: float) -> None:
            grads[i] += dout * (1.0 - out * out)

        self.records.append((o, back))
        return o

    def gradient(self, target: int, source: int) -> float:
        grads = self.grads
        grads[:] = [0.0] * len(self.values)
        grads[target] = 1.0
        for o, back in reversed(self.records):
            back(grads[o])
        return grads[source]


def plain_chain(prog: list[tuple[str, float]]) -> tuple[float, float]:
    """Forward and backward on the minimal tape: (value, d value / d x)."""
    tape = MiniTape()
    x = y = tape.leaf(X0)
    for name, c in prog:
        if name == "mul":
            y = tape.mul(y, c)
        elif name == "add":
            y = tape.add(y, c)
        else:
            y = tape.tanh(y)
    return tape.values[y], tape.gradient(y, x)


# -- microtape ------------------------------------------------------------------


def tape_chain(prog: list[tuple[str, float]]) -> tuple[float, float]:
    """The same chain with a GradientTape, as a student writes it (Python floats as constants)."""

    def run() -> tuple[float, float]:
        x = mt.scalar(X0)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for name, c in prog:
                if name == "mul":
                    y = y * c
                elif name == "add":
                    y = y + c
                else:
                    y = mt.tanh(y)
        g = tape.gradient(y, x)
        assert g is not None
        return y.item(), g.item()

    return mt.tidy(run)


def check_same(prog: list[tuple[str, float]]) -> None:
    a, b = tape_chain(prog), plain_chain(prog)
    assert math.isclose(a[0], b[0], rel_tol=1e-12) and math.isclose(a[1], b[1], rel_tol=1e-9), (a, b)
    assert a[1] != 0.0 and math.isfinite(a[1])  # the chain keeps its gradient in range


def run(cfg: Config) -> list[Row]:
    """Workload 2: 20,000 ops (500 in quick mode)."""
    n = 500 if cfg.quick else 20_000
    prog = program(n)
    check_same(prog)
    t = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg)
    row = ratio_row(f"chain of {n:,} scalar ops, fwd+bwd", t, 3.0)
    per_op = f"{t.a / n * 1e6:.2f} µs/op vs {t.b / n * 1e6:.2f}"
    return [Row(row.workload, f"{row.microtape} ({per_op})", row.baseline, row.ratio, "<= 3x (~1 µs/op)", row.met, 3.0)]


def run_million(cfg: Config) -> list[Row]:
    """Workload 3: a million ops; time ratio and tracemalloc peak ratio (not in quick mode)."""
    n = 20_000 if cfg.quick else 1_000_000
    prog = program(n)
    check_same(prog)
    reps = 1 if cfg.quick else min(cfg.reps, 3)
    t = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg, reps=reps, number=1)
    # at this size Python's cyclic collector dominates the baseline (its closures are GC-tracked
    # and every full collection walks millions of them), so show the ratio without it too
    was = gc.isenabled()
    gc.disable()
    try:
        t_nogc = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg, reps=reps, number=1)
    finally:
        if was:
            gc.enable()
    mem_tape = peak_bytes(lambda: tape_chain(prog))
    mem_plain = peak_bytes(lambda: plain_chain(prog))
    label = f"chain of {n:,} ops"
    time_row = ratio_row(f"{label}, fwd+bwd time", t, 2.0)
    mem_ratio = mem_tape / mem_plain
    mem_row = Row(
        f"{label}, peak memory (tracemalloc)",
        f"{fmt_bytes(mem_tape)} ({mem_tape / n:.0f} B/op)",
        f"{fmt_bytes(mem_plain)} ({mem_plain / n:.0f} B/op)",
        mem_ratio,
        "<= 2x",
        mem_ratio <= 2.0,
        2.0,
    )
    nogc_row = Row(
        "  same, cyclic gc disabled on both sides",
        fmt_time(t_nogc.a),
        fmt_time(t_nogc.b),
        t_nogc.ratio,
        "(info)",
        None,
    )
    return [time_row, nogc_row, mem_row]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "chain", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
