"""Solution: exercise 6b, a learning rate past the stability limit (chapter 6).

For x = [1, ..., 5], H = [[22, 6], [6, 2]]: λ_max = 23.66 and the limit is
2 / 23.66 = 0.0845, so 0.09 diverges. Any rate a little below the limit
converges; the shallow direction (λ_min = 0.34) sets how fast.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex06b_learning_rate.py``
"""

from __future__ import annotations

import math

import microtape as mt

EXERCISE = "ex06b_learning_rate"  # the grader reads this: do not change it

XS = [1.0, 2.0, 3.0, 4.0, 5.0]
YS = [1.0, 3.0, 5.0, 7.0, 9.0]  # y = 2x - 1

LR = 0.08  # below the limit 0.0845


def stability_limit() -> float:
    """2 / λ_max of the loss's Hessian, for the data in XS."""
    n = len(XS)
    a, c = 2.0 * sum(x * x for x in XS) / n, 2.0 * sum(XS) / n  # H = [[a, c], [c, 2]]
    trace, det = a + 2.0, a * 2.0 - c * c
    lam_max = (trace + math.sqrt(trace * trace - 4.0 * det)) / 2.0
    return 2.0 / lam_max


def fit(lr: float, steps: int) -> list[float]:
    """Plain SGD from w = b = 0; returns the loss before every step."""
    x, y = mt.tensor(XS), mt.tensor(YS)
    w, b = mt.variable(0.0), mt.variable(0.0)
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: ((x * w + b - y) ** 2).mean())
            w.assign_sub(grads[w] * lr)
            b.assign_sub(grads[b] * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    mt.dispose([x, y, w, b])
    return losses
