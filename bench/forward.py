"""Workload: forward mode (``mt.jvp``) and ``mt.taylor_test``, on f(W, x) = tanh(W @ x).

W has shape (8, n) and x length n (n = 16, 64, 256; 4 with ``--quick``).

* ``mt.jvp`` of the vector f along a direction (v_W, v_x): J v from two reverse
  passes over the ops of one call of f (microtape has no per-op JVP rule). The
  baseline is the plain-Python exact J v, written by hand with lists:
  (1 - tanh²(s)) ⊙ (v_W @ x + W @ v_x). Info rows: the ratio says what the
  VJP-of-the-VJP costs over the hand-written forward-mode arithmetic.
* ``mt.taylor_test`` of sum(f) with its default 5 steps: 6 calls of f and 6
  gradients along v (one at x and one per step, for the kink check). The
  baseline is the same Taylor test in plain Python: 6 calls of a list f and
  the hand-written gradient, dotted with v. Info rows.
* ``check_grads(mode="fast", modes=("rev", "fwd"))`` of sum(f): what the
  forward-mode tests (the JVP against the difference along v, and the
  dot-product test) add to the fast reverse check. The baseline is the same
  check with the default ``modes=("rev",)``; the ratio is the cost of the
  ``fwd`` mode, an info row.

Run: ``python bench/forward.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import math
import operator
import random

import microtape as mt
from _timing import Config, Row, compare, fmt_time

ROWS = 8
Matrix = list[list[float]]
mul = operator.mul


def f(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    return mt.tanh(w @ x)


def loss(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    return mt.tanh(w @ x).sum()


def plain_jvp(w: Matrix, x: list[float], vw: Matrix, vx: list[float]) -> list[float]:
    """J v of tanh(W @ x), exactly: (1 - tanh²(s_i)) (Σ_j vW_ij x_j + Σ_j W_ij vx_j)."""
    out = []
    for row, vrow in zip(w, vw):
        s = sum(map(mul, row, x))
        out.append((1.0 - math.tanh(s) ** 2) * (sum(map(mul, vrow, x)) + sum(map(mul, row, vx))))
    return out


def plain_loss(w: Matrix, x: list[float]) -> float:
    return sum([math.tanh(sum(map(mul, row, x))) for row in w])


def plain_taylor(w: Matrix, x: list[float], vw: Matrix, vx: list[float], steps: int = 5, h0: float = 0.1) -> list[float]:
    """The Taylor test's remainders |f(p + h v) - f(p) - h ∇f·v| in plain Python, with the slope at each step too."""
    f0, slope = plain_loss(w, x), sum(plain_jvp(w, x, vw, vx))
    rems = []
    for k in range(steps):
        h = h0 / 2**k
        wh = [[a + h * b for a, b in zip(r, vr)] for r, vr in zip(w, vw)]
        xh = [a + h * b for a, b in zip(x, vx)]
        sum(plain_jvp(wh, xh, vw, vx))  # the slope at the step, as taylor_test measures for kinks
        rems.append(abs(plain_loss(wh, xh) - f0 - h * slope))
    return rems


def run(cfg: Config) -> list[Row]:
    sizes = (4,) if cfg.quick else (16, 64, 256)
    rows: list[Row] = []
    for n in sizes:
        rng = random.Random(n)
        w = [[rng.uniform(-0.5, 0.5) for _ in range(n)] for _ in range(ROWS)]
        x = [rng.uniform(-0.5, 0.5) for _ in range(n)]
        vw = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for _ in range(ROWS)]
        vx = [rng.uniform(-1.0, 1.0) for _ in range(n)]
        tw, tx, tvw, tvx = (mt.keep(mt.tensor(v)) for v in (w, x, vw, vx))
        try:
            _, jv = mt.jvp(f, [tw, tx], [tvw, tvx])
            assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(jv.data_sync(), plain_jvp(w, x, vw, vx)))
            jv.dispose()
            t = compare(lambda: mt.tidy(lambda: mt.jvp(f, [tw, tx], [tvw, tvx])[1].data_sync()), lambda: plain_jvp(w, x, vw, vx), cfg)
            rows.append(Row(f"jvp of tanh(W @ x), n={n} ({9 * n} inputs, 8 outputs)", fmt_time(t.a), fmt_time(t.b) + " (exact J v by hand)", t.ratio, "(info)", None))
            report = mt.taylor_test(loss, [tw, tx], [tvw, tvx])
            assert report.verdict == "passed", report
            t = compare(lambda: mt.taylor_test(loss, [tw, tx], [tvw, tvx]), lambda: plain_taylor(w, x, vw, vx), cfg)
            rows.append(Row(f"taylor_test of sum(tanh(W @ x)), n={n}, 5 steps", fmt_time(t.a), fmt_time(t.b) + " (plain-Python Taylor test)", t.ratio, "(info)", None))
            both = mt.check_grads(loss, [tw, tx], mode="fast", modes=("rev", "fwd"))
            assert both.ok and both.tests == {"rev": "passed", "fwd": "passed", "dot": "passed"}, both
            t = compare(lambda: mt.check_grads(loss, [tw, tx], mode="fast", modes=("rev", "fwd")), lambda: mt.check_grads(loss, [tw, tx], mode="fast"), cfg)
            rows.append(Row(f"check_grads fast, modes=(rev, fwd), n={n}", fmt_time(t.a), fmt_time(t.b) + " (modes=(rev,): the fwd mode's cost)", t.ratio, "(info)", None))
        finally:
            mt.dispose([tw, tx, tvw, tvx])
    return rows


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "forward", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
