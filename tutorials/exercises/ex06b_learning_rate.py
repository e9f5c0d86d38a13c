"""Exercise 6b: a run that diverges although every gradient is right.

Chapter 6, "In practice" (Практическое применение).

``fit(LR, steps)`` trains the linear model y = w·x + b on the data below
with plain SGD. The gradients pass ``mt.check_grads`` and nothing is NaN
at first, but the loss grows step after step. Print a few losses (or a
``mt.sparkline``) and compare with chapter 6's learning-rate section.

For this loss (a quadratic) plain gradient descent converges only when the
learning rate is below 2 / λ_max, where λ_max is the largest eigenvalue of
the Hessian H = 2·[[mean x², mean x], [mean x, 1]].

1. ``stability_limit()``: return 2 / λ_max for the data in ``XS``, computed
   from the data (the grader changes ``XS`` and calls it again).
2. Set ``LR`` to a learning rate with which ``fit(LR, 300)`` brings the
   loss below 1e-3 (the best possible loss is 0).

Check your work (in the folder that holds this file)::

    python -m microtape grade ex06b_learning_rate.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex06b_learning_rate"  # the grader reads this: do not change it

XS = [1.0, 2.0, 3.0, 4.0, 5.0]
YS = [1.0, 3.0, 5.0, 7.0, 9.0]  # y = 2x - 1

LR = 0.09


def stability_limit() -> float:
    """2 / λ_max of the loss's Hessian, for the data in XS."""
    raise NotImplementedError("TODO 1: work out λ_max of the 2x2 Hessian from XS and return 2 / λ_max")


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
