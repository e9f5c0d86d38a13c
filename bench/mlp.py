"""Workload 1: one training step of an MLP 2-16-16-1 on two moons.

The step is forward + backward + SGD update on all 100 points at once:
ReLU hidden layers, the SVM max-margin loss ``mean(relu(1 - y * score))``
plus ``1e-4 * sum(p * p)`` over every parameter (micrograd's demo, batched).
microtape runs it with batched tensor ops ((100, 2) @ (2, 16) and so on);
the baseline is the same maths hand-written over Python lists with a
hand-written backward, as fast as plain Python gets (rows against
transposed columns, ``sum(map(operator.mul, row, col))``). Both start from
the same parameters, and the script checks they agree on the loss and on
every gradient before timing anything.

Run: ``python bench/mlp.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable

import microtape as mt
from _timing import Config, Row, compare, ratio_row

SIZES = (2, 16, 16, 1)
ALPHA = 1e-4  # L2 weight
LR = 0.05

Matrix = list[list[float]]
Params = list[Matrix]  # W1, b1, W2, b2, W3, b3; a bias is a 1-row matrix
mul = operator.mul


def two_moons(n: int, seed: int = 0, noise: float = 0.1) -> tuple[Matrix, list[float]]:
    """``n`` points of two interleaved half circles, labels -1 and +1 (like sklearn's make_moons)."""
    rng = random.Random(seed)
    xs: Matrix = []
    ys: list[float] = []
    for i in range(n):
        t = rng.uniform(0.0, math.pi)
        if i % 2 == 0:
            x, y, label = math.cos(t), math.sin(t), -1.0
        else:
            x, y, label = 1.0 - math.cos(t), 0.5 - math.sin(t), 1.0
        xs.append([x + rng.gauss(0.0, noise), y + rng.gauss(0.0, noise)])
        ys.append(label)
    return xs, ys


def init_params(seed: int = 1) -> Params:
    """Weights uniform in [-1, 1] (as micrograd), biases 0."""
    rng = random.Random(seed)
    params: Params = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        params.append([[rng.uniform(-1.0, 1.0) for _ in range(fan_out)] for _ in range(fan_in)])
        params.append([[0.0] * fan_out])
    return params


# -- the baseline: lists and a hand-written backward --------------------------


def _dense_relu(h: Matrix, w: Matrix, b: list[float]) -> Matrix:
    """relu(h @ w + b) row by row, before the relu kept for the backward pass."""
    cols = list(zip(*w))
    return [[sum(map(mul, row, c)) + bj for c, bj in zip(cols, b)] for row in h]


def plain_loss_and_grads(p: Params, xs: Matrix, ys: list[float]) -> tuple[float, Params]:
    """The loss and the gradient of every parameter, by hand."""
    w1, b1, w2, b2, w3, b3 = p
    n = len(xs)
    # forward
    z1 = _dense_relu(xs, w1, b1[0])
    h1 = [[z if z > 0.0 else 0.0 for z in row] for row in z1]
    z2 = _dense_relu(h1, w2, b2[0])
    h2 = [[z if z > 0.0 else 0.0 for z in row] for row in z2]
    w3col = [r[0] for r in w3]
    scores = [sum(map(mul, row, w3col)) + b3[0][0] for row in h2]
    margins = [1.0 - y * s for y, s in zip(ys, scores)]
    data_loss = sum([m if m > 0.0 else 0.0 for m in margins]) / n
    reg = sum([v * v for m in p for row in m for v in row])
    loss = data_loss + ALPHA * reg
    # backward: d loss / d score_i = -y_i / n where the margin is active
    ds = [-y / n if m > 0.0 else 0.0 for y, m in zip(ys, margins)]
    dw3 = [[sum(map(mul, col, ds))] for col in zip(*h2)]
    db3 = [[sum(ds)]]
    dz2 = [[d * w if z > 0.0 else 0.0 for w, z in zip(w3col, zrow)] for d, zrow in zip(ds, z2)]
    dz2t = list(zip(*dz2))
    dw2 = [[sum(map(mul, hk, dj)) for dj in dz2t] for hk in zip(*h1)]
    db2 = [[sum(dj) for dj in dz2t]]
    dh1 = [[sum(map(mul, drow, wk)) for wk in w2] for drow in dz2]
    dz1 = [[d if z > 0.0 else 0.0 for d, z in zip(drow, zrow)] for drow, zrow in zip(dh1, z1)]
    dz1t = list(zip(*dz1))
    dw1 = [[sum(map(mul, xk, dj)) for dj in dz1t] for xk in zip(*xs)]
    db1 = [[sum(dj) for dj in dz1t]]
    grads = [dw1, db1, dw2, db2, dw3, db3]
    two_alpha = 2.0 * ALPHA
    grads = [[[g + two_alpha * v for g, v in zip(grow, prow)] for grow, prow in zip(gm, pm)] for gm, pm in zip(grads, p)]
    return loss, grads


def plain_step(p: Params, xs: Matrix, ys: list[float]) -> float:
    """Forward, backward and SGD update in place; returns the loss."""
    loss, grads = plain_loss_and_grads(p, xs, ys)
    for pm, gm in zip(p, grads):
        for prow, grow in zip(pm, gm):
            prow[:] = [v - LR * g for v, g in zip(prow, grow)]
    return loss


# -- microtape: batched tensor ops ---------------------------------------------


class TapeMLP:
    """The same network as microtape variables; ``step`` is what a student writes."""

    def __init__(self, p: Params, xs: Matrix, ys: list[float]) -> None:
        self.params = [mt.variable(mt.tensor(m if len(m) > 1 else m[0])) for m in p]
        self.x = mt.keep(mt.tensor(xs))
        self.y = mt.keep(mt.tensor([[v] for v in ys]))

    def loss(self) -> mt.Tensor:
        w1, b1, w2, b2, w3, b3 = self.params
        h = mt.relu(self.x @ w1 + b1)
        h = mt.relu(h @ w2 + b2)
        scores = h @ w3 + b3  # (n, 1)
        data_loss = mt.relu(1.0 - self.y * scores).mean()
        reg = (w1 * w1).sum() + (b1 * b1).sum() + (w2 * w2).sum() + (b2 * b2).sum() + (w3 * w3).sum() + (b3 * b3).sum()
        return data_loss + ALPHA * reg

    def loss_and_grads(self) -> tuple[float, list[list[float]]]:
        def run() -> tuple[float, list[list[float]]]:
            with mt.GradientTape() as tape:
                loss = self.loss()
            grads = tape.gradient(loss, self.params)
            return loss.item(), [g.data_sync() for g in grads if g is not None]

        return mt.tidy(run)

    def step(self) -> float:
        def run() -> float:
            with mt.GradientTape() as tape:
                loss = self.loss()
            grads = tape.gradient(loss, self.params)
            for p, g in zip(self.params, grads):
                assert g is not None
                p.assign_sub(g * LR)
            return loss.item()

        return mt.tidy(run)

    def dispose(self) -> None:
        mt.dispose([self.x, self.y, *self.params])


def _flat(m: Matrix) -> list[float]:
    return [v for row in m for v in row]


def check_same(p: Params, xs: Matrix, ys: list[float], model: TapeMLP) -> None:
    """Assert both implementations give the same loss and gradients."""
    loss_a, grads_a = plain_loss_and_grads(p, xs, ys)
    loss_b, grads_b = model.loss_and_grads()
    assert math.isclose(loss_a, loss_b, rel_tol=1e-12, abs_tol=1e-12), (loss_a, loss_b)
    assert len(grads_a) == len(grads_b) == 6
    for ga, gb in zip(grads_a, grads_b):
        fa = _flat(ga)
        assert len(fa) == len(gb)
        for u, v in zip(fa, gb):
            assert math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12), (u, v)


def setup(quick: bool) -> tuple[Callable[[], float], Callable[[], float], Callable[[], None]]:
    """Build both steps on the same data and parameters (checked equal); returns (microtape, plain, cleanup)."""
    xs, ys = two_moons(20 if quick else 100)
    p = init_params()
    model = TapeMLP(p, xs, ys)
    check_same(p, xs, ys, model)
    for _ in range(3):  # a few steps each: still in step with each other
        assert math.isclose(model.step(), plain_step(p, xs, ys), rel_tol=1e-9)
    check_same(p, xs, ys, model)
    return model.step, lambda: plain_step(p, xs, ys), model.dispose


def run(cfg: Config) -> list[Row]:
    tape_step, list_step, cleanup = setup(cfg.quick)
    try:
        t = compare(tape_step, list_step, cfg)
    finally:
        cleanup()
    n = 20 if cfg.quick else 100
    return [ratio_row(f"MLP 2-16-16-1 step, {n} points", t, 1.5)]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "mlp", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
