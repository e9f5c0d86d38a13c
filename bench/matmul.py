"""Workload 4: a 64x64 matmul, loss = sum(C * C), gradients for both inputs.

Here the arithmetic is big (three 64x64x64 products: forward, dA, dB) and the
op count small, so the ratio shows what microtape adds on top of the
kernel. The baseline is the fastest plain-Python matmul we know: rows of A
against the columns of B (``zip(*B)``) with ``sum(map(operator.mul, row,
col))``, and the backward written by hand: dC = 2C, dA = dC Bᵀ, dB = Aᵀ dC.

Run: ``python bench/matmul.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import math
import operator
import random

import microtape as mt
from _timing import Config, Row, compare, ratio_row

Matrix = list[list[float]]
mul = operator.mul


def plain_grads(a: Matrix, b: Matrix) -> tuple[float, Matrix, Matrix]:
    """(loss, dA, dB) of loss = sum((A @ B)²), by hand."""
    c = [[sum(map(mul, row, col)) for col in zip(*b)] for row in a]
    loss = sum([v * v for row in c for v in row])
    dc = [[2.0 * v for v in row] for row in c]
    da = [[sum(map(mul, drow, brow)) for brow in b] for drow in dc]  # dC @ Bᵀ: rows against rows
    dct = list(zip(*dc))
    db = [[sum(map(mul, acol, dcol)) for dcol in dct] for acol in zip(*a)]  # Aᵀ @ dC
    return loss, da, db


def tape_grads(a: mt.Tensor, b: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor, mt.Tensor]:
    """The same with a GradientTape: (loss, dA, dB) as tensors, the caller disposes them.

    Only tensors leave the ``tidy`` scope: returning ``data_sync()`` lists would
    make ``tidy`` walk 8,192 floats looking for tensors, which costs more than
    a fifth of this workload (reported to the engine, measured separately).
    """

    def run() -> tuple[mt.Tensor, mt.Tensor, mt.Tensor]:
        with mt.GradientTape() as tape:
            tape.watch([a, b])
            c = a @ b
            loss = (c * c).sum()
        da, db = tape.gradient(loss, [a, b])
        assert da is not None and db is not None
        return loss, da, db

    return mt.tidy(run)


def tape_step(a: mt.Tensor, b: mt.Tensor) -> None:
    """One timed run: compute, then free the results."""
    mt.dispose(tape_grads(a, b))


def run(cfg: Config) -> list[Row]:
    n = 8 if cfg.quick else 64
    rng = random.Random(0)
    a = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for _ in range(n)]
    b = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for _ in range(n)]
    ta, tb = mt.keep(mt.tensor(a)), mt.keep(mt.tensor(b))
    try:
        loss_p, da_p, db_p = plain_grads(a, b)
        results = tape_grads(ta, tb)
        loss_t, da_t, db_t = results[0].item(), results[1].data_sync(), results[2].data_sync()
        mt.dispose(results)
        assert math.isclose(loss_p, loss_t, rel_tol=1e-12)
        for mine, theirs in ((da_p, da_t), (db_p, db_t)):
            flat = [v for row in mine for v in row]
            assert all(math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12) for u, v in zip(flat, theirs))
        t = compare(lambda: tape_step(ta, tb), lambda: plain_grads(a, b), cfg)
    finally:
        mt.dispose([ta, tb])
    return [ratio_row(f"{n}x{n} matmul, sum(C*C), dA and dB", t, 1.3)]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "matmul", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
