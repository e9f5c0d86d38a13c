"""Workload 5: ``mt.check_grads`` of f(W, x) = sum(tanh(W @ x)).

``n`` is the length of x, and W has shape (8, n), so both inputs count and
there are 9n input entries in all (144, 576 and 2304 for n = 16, 64, 256);
one evaluation of f costs 8n multiplications.

* ``mode="full"`` evaluates f 2·9n + 1 times and compares every entry. The
  baseline is plain-Python central differences of the same f written with
  lists (2·9n evaluations, no analytic gradient, no report): the checker's
  unavoidable cost. Target: at most 2x at every size.
* ``mode="fast"`` checks one random directional derivative: 3 evaluations of
  f and one backward pass whatever n is. The baseline is the same directional
  central difference in plain Python (3 evaluations). Target: the number of
  evaluations stays flat in n.
* An info row: the full check, at the smallest n, of the same f with a tanh
  whose VJP is 1.5 times too large, against the passing check: what a
  failure adds (the culprit finder's re-run of f and of each op).

Run: ``python bench/checkgrads.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable

import microtape as mt
from _timing import Config, Row, compare, fmt_time

ROWS = 8
EPS = 1e-6
Matrix = list[list[float]]
mul = operator.mul


def plain_f(w: Matrix, x: list[float]) -> float:
    return sum([math.tanh(sum(map(mul, row, x))) for row in w])


def plain_central(w: Matrix, x: list[float]) -> list[float]:
    """Central differences of plain_f for every entry of w, then of x."""
    grads: list[float] = []
    for vec in [*w, x]:
        for j in range(len(vec)):
            keep = vec[j]
            vec[j] = keep + EPS
            plus = plain_f(w, x)
            vec[j] = keep - EPS
            minus = plain_f(w, x)
            vec[j] = keep
            grads.append((plus - minus) / (2 * EPS))
    return grads


def plain_directional(w: Matrix, x: list[float], u: Matrix, ux: list[float]) -> float:
    """(f(p + εu) - f(p - εu)) / 2ε with f(p) too: what fast mode evaluates."""

    def at(t: float) -> float:
        return plain_f([[a + t * b for a, b in zip(r, ur)] for r, ur in zip(w, u)], [a + t * b for a, b in zip(x, ux)])

    plus, minus, _ = at(EPS), at(-EPS), at(0.0)
    return (plus - minus) / (2 * EPS)


def f(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    return mt.tanh(w @ x).sum()


def analytic(w: Matrix, x: list[float]) -> list[float]:
    """Exact gradient: d/dW[i][j] = (1 - tanh²(s_i)) x_j, d/dx_j = Σ_i (1 - tanh²(s_i)) W[i][j]."""
    d = [1.0 - math.tanh(sum(map(mul, row, x))) ** 2 for row in w]
    dw = [di * xj for di in d for xj in x]
    dx = [sum(map(mul, d, col)) for col in zip(*w)]
    return dw + dx


def tanh_off(t: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
    """tanh whose VJP is 1.5 times too large: a check of it fails and runs the culprit finder."""
    return mt.tanh(t), lambda dy: dy * 1.5 * (1.0 - mt.square(mt.tanh(t)))


wrong_tanh = mt.custom_grad(tanh_off)


def f_wrong(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    return wrong_tanh(w @ x).sum()


FULL_LIMIT = 2.0
"""check_grads full mode at most this many times plain central differences, at every size."""


def run(cfg: Config) -> list[Row]:
    sizes = (4,) if cfg.quick else (16, 64, 256)
    rows: list[Row] = []
    fast_evals: dict[int, int] = {}
    fast_rows: list[tuple[int, float, float, float]] = []
    culprit_row: Row | None = None
    for n in sizes:
        rng = random.Random(n)
        w = [[rng.uniform(-0.5, 0.5) for _ in range(n)] for _ in range(ROWS)]
        x = [rng.uniform(-0.5, 0.5) for _ in range(n)]
        tw, tx = mt.keep(mt.tensor(w)), mt.keep(mt.tensor(x))
        try:
            exact = analytic(w, x)
            numeric = plain_central(w, x)
            assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8) for a, b in zip(exact, numeric))
            report = mt.check_grads(f, [tw, tx], eps=EPS, mode="full")
            assert report.ok and report.evaluations == 2 * 9 * n + 1, report
            full = compare(lambda: mt.check_grads(f, [tw, tx], eps=EPS, mode="full"), lambda: plain_central(w, x), cfg)
            rows.append(
                Row(
                    f"check_grads full, n={n} ({9 * n} inputs)",
                    fmt_time(full.a),
                    fmt_time(full.b),
                    full.ratio,
                    f"<= {FULL_LIMIT:g}x",
                    full.ratio <= FULL_LIMIT,
                    FULL_LIMIT,
                )
            )
            fast = mt.check_grads(f, [tw, tx], eps=EPS, mode="fast", seed=0)
            assert fast.ok
            fast_evals[n] = fast.evaluations
            u = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for _ in range(ROWS)]
            ux = [rng.uniform(-1.0, 1.0) for _ in range(n)]
            t = compare(
                lambda: mt.check_grads(f, [tw, tx], eps=EPS, mode="fast", seed=0),
                lambda: plain_directional(w, x, u, ux),
                cfg,
            )
            fast_rows.append((n, t.a, t.b, t.ratio))
            if n == sizes[0]:  # a failing check: the same work, plus the search for the culprit
                wrong = mt.check_grads(f_wrong, [tw, tx], eps=EPS, mode="full")
                assert not wrong.ok and wrong.culprit is not None and wrong.culprit.op == "custom_grad(tanh_off)", wrong
                failing = compare(
                    lambda: mt.check_grads(f_wrong, [tw, tx], eps=EPS, mode="full"),
                    lambda: mt.check_grads(f, [tw, tx], eps=EPS, mode="full"),
                    cfg,
                )
                culprit_row = Row(
                    f"check_grads full, n={n}, a wrong VJP: the culprit finder's cost",
                    fmt_time(failing.a),
                    fmt_time(failing.b) + " (passing check)",
                    failing.ratio,
                    "(info)",
                    None,
                )
        finally:
            mt.dispose([tw, tx])
    if culprit_row is not None:
        rows.append(culprit_row)
    flat = len(set(fast_evals.values())) == 1
    for n, a, b, ratio in fast_rows:
        rows.append(
            Row(
                f"check_grads fast, n={n}: {fast_evals[n]} evaluations of f",
                fmt_time(a),
                fmt_time(b) + " (3 evals)",
                ratio,
                "evaluations flat in n",
                flat,
            )
        )
    return rows


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "checkgrads", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
