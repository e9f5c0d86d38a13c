"""Workloads 2 and 3: a long chain of scalar ops, forward + backward.

The chain repeats ``mul 2, add 1e-3, add -1e-3, mul 0.5`` (twice), ``add 0``
and a ``tanh``: 4 muls, 5 adds and a tanh in every ten ops, and values and
gradients stay in a normal float range for a million ops. microtape records
it on a ``GradientTape`` (inside ``tidy``, so each run frees what it made).

The baseline is the smallest tape plain Python allows, ``TupleTape``: the
values in a list, one plain tuple ``(kind, input index, output index,
constant or saved output)`` appended per op, and a backward pass that is one
reversed loop with an ``if``/``elif`` on the kind. That is the floor any
tape-based autodiff in Python pays per op; the ratio is microtape's
bookkeeping (tensor objects, op table, scopes, records). Two more rows,
same chain, same run:

* a closure tape (``(output index, backward closure)`` records), for
  information: it is the baseline of the first measurements, and shows what
  one closure per op costs against a tuple;
* micrograd (``Value``) and PyTorch (0-d float64 tensors), when installed
  (``other_engines.py``), each in a process of its own
  (``engine_race.py``); a missing one is a "skipped" row that counts
  neither as met nor as missed.

Every side is checked against microtape (same value, same gradient) before
anything is timed.

Workload 3 runs a million ops against the tuple tape: time ratio, the same
with the cyclic garbage collector disabled on both sides (at this size full
collections, which walk every live GC-tracked object, are a large part of
the time), the time ratio against the closure tape (information), and the
peak memory ratio measured with tracemalloc (exact for
pure Python; see ``_timing.peak_bytes``).

Run: ``python bench/chain.py [--quick] [--repeat N]`` (``--only chain1m`` in run.py for the long one).
"""

from __future__ import annotations

import gc
import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import microtape as mt
import other_engines
from prototype import prototype_chain
from _timing import Config, Row, Timing, compare, fmt_bytes, fmt_time, peak_bytes, ratio_row

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


# -- the baseline: a tape of plain tuples ------------------------------------------


class TupleTape:
    """Values in a list; each op appends ``(kind, input index, output index, constant or saved output)``."""

    __slots__ = ("values", "records")

    def __init__(self) -> None:
        self.values: list[float] = []
        self.records: list[tuple[str, int, int, float]] = []

    def leaf(self, v: float) -> int:
        self.values.append(v)
        return len(self.values) - 1

    def mul(self, i: int, c: float) -> int:
        values = self.values
        o = len(values)
        values.append(values[i] * c)
        self.records.append(("mul", i, o, c))
        return o

    def add(self, i: int, c: float) -> int:
        values = self.values
        o = len(values)
        values.append(values[i] + c)
        self.records.append(("add", i, o, c))
        return o

    def tanh(self, i: int) -> int:
        values = self.values
        o = len(values)
        out = math.tanh(values[i])
        values.append(out)
        self.records.append(("tanh", i, o, out))  # the VJP needs the output, not the input
        return o

    def gradient(self, target: int, source: int) -> float:
        grads = [0.0] * len(self.values)
        grads[target] = 1.0
        for kind, i, o, c in reversed(self.records):
            g = grads[o]
            if kind == "mul":
                grads[i] += g * c
            elif kind == "add":
                grads[i] += g
            else:  # tanh: d tanh(x) = 1 - tanh(x)^2
                grads[i] += g * (1.0 - c * c)
        return grads[source]


def plain_chain(prog: list[tuple[str, float]]) -> tuple[float, float]:
    """Forward and backward on the tuple tape: (value, d value / d x)."""
    return run_on(TupleTape(), prog)


# -- for information: a closure tape ----------------------------------------------


class ClosureTape:
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


def closure_chain(prog: list[tuple[str, float]]) -> tuple[float, float]:
    """Forward and backward on the closure tape: (value, d value / d x)."""
    return run_on(ClosureTape(), prog)


def run_on(tape: TupleTape | ClosureTape, prog: list[tuple[str, float]]) -> tuple[float, float]:
    """The chain on one of the plain tapes (the same calls for both): (value, d value / d x)."""
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


def agree(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Same chain value (to rounding) and same gradient (to the rounding of 20,000 products)."""
    return math.isclose(a[0], b[0], rel_tol=1e-12) and math.isclose(a[1], b[1], rel_tol=1e-9)


def check_same(prog: list[tuple[str, float]], other: Callable[[list[tuple[str, float]]], tuple[float, float]] = plain_chain) -> None:
    """``other`` computes the chain's value and gradient as microtape does (AssertionError if not)."""
    a, b = tape_chain(prog), other(prog)
    assert agree(a, b), (a, b)
    assert a[1] != 0.0 and math.isfinite(a[1])  # the chain keeps its gradient in range


CHAIN_LIMIT = 9.0
"""microtape's chain at most this many times the tuple tape: within a fifth of the bare engine of
``prototype.py``, which keeps TF.js's semantics (the first target, 4x, assumed no tensor per op)."""
MEMORY_LIMIT = 2.5
"""The million-op chain's peak memory at most this many times the tuple tape's."""
RIVAL_LIMIT = 1.0
"""microtape's chain faster than micrograd and PyTorch: ratio microtape / other at most this. The
bound since every backward pass calls the VJP written beside each op (there is no second, list-only
copy of a rule any more); the earlier aim, 1.5x faster (0.67), was met with that second copy."""


def _per_op(t: Timing, n: int) -> str:
    return f"{t.a / n * 1e6:.2f} µs/op vs {t.b / n * 1e6:.2f}"


RACE = Path(__file__).resolve().with_name("engine_race.py")


def other_engine_rows(n: int, cfg: Config) -> list[Row]:
    """microtape against micrograd and PyTorch on the same chain, or a "skipped" row for each one missing.

    Each comparison runs in a process of its own (``engine_race.py`` says why).
    """
    rows: list[Row] = []
    target = f"<= {RIVAL_LIMIT:g}x (faster)"
    for name, (label, _, hint) in other_engines.ENGINES.items():
        workload = f"  same chain, microtape vs {label}"
        if not other_engines.available(name):
            rows.append(Row(workload, "-", hint, None, target, None))
            continue
        args = [sys.executable, str(RACE), name, "--n", str(n), "--repeat", str(cfg.repeat), "--min-time", str(cfg.min_time)]
        done = subprocess.run(args + (["--quick"] if cfg.quick else []), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{RACE.name} {name} failed:\n{done.stdout}{done.stderr}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if result["skipped"]:
            rows.append(Row(workload, "-", hint, None, target, None))
            continue
        a, b, ratio = float(result["a"]), float(result["b"]), float(result["ratio"])
        rows.append(
            Row(
                f"{workload} {result['version']}",
                f"{fmt_time(a)} ({a / n * 1e6:.2f} µs/op)",
                f"{fmt_time(b)} ({b / n * 1e6:.2f} µs/op)",
                ratio,
                target,
                ratio <= RIVAL_LIMIT,
                RIVAL_LIMIT,
            )
        )
    return rows


def run(cfg: Config) -> list[Row]:
    """Workload 2: 20,000 ops (500 in quick mode) against the tuple tape, then the information and other-engine rows."""
    n = 500 if cfg.quick else 20_000
    prog = program(n)
    check_same(prog)
    check_same(prog, closure_chain)
    t = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg)
    row = ratio_row(f"chain of {n:,} scalar ops, fwd+bwd, vs tuple tape", t, CHAIN_LIMIT)
    main_row = Row(row.workload, f"{row.microtape} ({_per_op(t, n)})", row.baseline, row.ratio, row.target, row.met, row.limit)
    tc = compare(lambda: tape_chain(prog), lambda: closure_chain(prog), cfg)
    closure_row = Row(
        "  same chain, microtape vs closure tape",
        f"{fmt_time(tc.a)} ({_per_op(tc, n)})",
        fmt_time(tc.b),
        tc.ratio,
        "(info)",
        None,
    )
    check_same(prog, lambda p: prototype_chain(p, X0))
    tp = compare(lambda: prototype_chain(prog, X0), lambda: plain_chain(prog), cfg)
    floor_row = Row(
        "  same chain, bare prototype (prototype.py) vs tuple tape",
        f"{fmt_time(tp.a)} ({_per_op(tp, n)})",
        fmt_time(tp.b),
        tp.ratio,
        "(info)",
        None,
    )
    check_same(prog, lambda p: prototype_chain(p, X0, False))
    tf = compare(lambda: prototype_chain(prog, X0, False), lambda: plain_chain(prog), cfg)
    floats_row = Row(
        "  same, the prototype with numbers kept as floats, vs tuple tape",
        f"{fmt_time(tf.a)} ({_per_op(tf, n)})",
        fmt_time(tf.b),
        tf.ratio,
        "(info)",
        None,
    )
    return [main_row, closure_row, floor_row, floats_row, *other_engine_rows(n, cfg)]


def run_million(cfg: Config) -> list[Row]:
    """Workload 3: a million ops; time ratio and tracemalloc peak ratio (not in quick mode)."""
    n = 20_000 if cfg.quick else 1_000_000
    prog = program(n)
    check_same(prog)
    reps = 1 if cfg.quick else min(cfg.reps, 3)
    t = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg, reps=reps, number=1)
    # at this size Python's cyclic collector is a large part of both sides (every full collection
    # walks each live GC-tracked object: tuples, tensors, records), so show the ratio without it too
    was = gc.isenabled()
    gc.disable()
    try:
        t_nogc = compare(lambda: tape_chain(prog), lambda: plain_chain(prog), cfg, reps=reps, number=1)
    finally:
        if was:
            gc.enable()
    # the closure tape, for information: the first baseline, which the earlier million-op figures used
    tc = compare(lambda: tape_chain(prog), lambda: closure_chain(prog), cfg, reps=reps, number=1)
    mem_tape = peak_bytes(lambda: tape_chain(prog))
    mem_plain = peak_bytes(lambda: plain_chain(prog))
    mem_floor = peak_bytes(lambda: prototype_chain(prog, X0))
    mem_floats = peak_bytes(lambda: prototype_chain(prog, X0, False))
    check_same(prog, lambda p: prototype_chain(p, X0, False, False))
    mem_unboxed = peak_bytes(lambda: prototype_chain(prog, X0, False, False))
    label = f"chain of {n:,} ops"
    time_row = ratio_row(f"{label}, fwd+bwd time, vs tuple tape", t, 2.0)
    mem_ratio = mem_tape / mem_plain
    mem_row = Row(
        f"{label}, peak memory (tracemalloc)",
        f"{fmt_bytes(mem_tape)} ({mem_tape / n:.0f} B/op)",
        f"{fmt_bytes(mem_plain)} ({mem_plain / n:.0f} B/op)",
        mem_ratio,
        f"<= {MEMORY_LIMIT:g}x",
        mem_ratio <= MEMORY_LIMIT,
        MEMORY_LIMIT,
    )
    nogc_row = Row(
        "  same, cyclic gc disabled on both sides",
        fmt_time(t_nogc.a),
        fmt_time(t_nogc.b),
        t_nogc.ratio,
        "(info)",
        None,
    )
    closure_row = Row(
        "  same, microtape vs closure tape",
        fmt_time(tc.a),
        fmt_time(tc.b),
        tc.ratio,
        "(info)",
        None,
    )
    floor_row = Row(
        "  same, bare prototype (prototype.py) vs tuple tape",
        f"{fmt_bytes(mem_floor)} ({mem_floor / n:.0f} B/op)",
        f"{fmt_bytes(mem_plain)} ({mem_plain / n:.0f} B/op)",
        mem_floor / mem_plain,
        "(info)",
        None,
    )
    floats_row = Row(
        "  same, the prototype with numbers kept as floats, vs tuple tape",
        f"{fmt_bytes(mem_floats)} ({mem_floats / n:.0f} B/op)",
        f"{fmt_bytes(mem_plain)} ({mem_plain / n:.0f} B/op)",
        mem_floats / mem_plain,
        "(info)",
        None,
    )
    unboxed_row = Row(
        "  same, and 0-d values held as floats, not lists, vs tuple tape",
        f"{fmt_bytes(mem_unboxed)} ({mem_unboxed / n:.0f} B/op)",
        f"{fmt_bytes(mem_plain)} ({mem_plain / n:.0f} B/op)",
        mem_unboxed / mem_plain,
        "(info)",
        None,
    )
    return [time_row, nogc_row, closure_row, mem_row, floor_row, floats_row, unboxed_row]


if __name__ == "__main__":
    import os
    import runpy

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "chain", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
