"""Solution: exercise 7b, trace a NaN back to where it came from (chapter 7).

The trace names ``sqrt`` in the backward pass first: at the point that sits
on the center, ``sqrt`` gets 0.0, and its derivative 1/(2*sqrt(x)) is inf.
The NaN comes one op later, when the square's VJP multiplies that inf by
2 * (point - center) = 0, and from there it reaches the center's gradient,
so the center and every later loss are NaN. The forward pass is fine, which
is why the first loss is. A tiny epsilon under the root keeps the slope
finite and changes each distance by at most 1e-7.
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex07b_trace_the_nan"  # the grader reads this: do not change it

POINTS = mt.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0], [-1.0, -1.0]])
START = [0.0, 0.0]  # exactly on the first point

FIRST_OP = "sqrt"
FIRST_PASS = "backward"


def distance(points: mt.Tensor, center: mt.Tensor) -> mt.Tensor:
    """The Euclidean distance from each point (a row) to ``center``, shape (rows,)."""
    # sqrt has an infinite slope at 0: a point on the center made its gradient inf,
    # and 0 * inf in the square's VJP made the NaN. A tiny epsilon keeps the slope finite
    # (1/(2*sqrt(1e-14)) = 5e6) and moves a distance by at most 1e-7.
    return mt.sqrt(((points - center) ** 2.0).sum(axis=1) + 1e-14)


def loss_fn(center: mt.Tensor) -> mt.Tensor:
    """The mean distance from ``center`` to the points."""
    return distance(POINTS, center).mean()


def fit(steps: int, lr: float) -> list[float]:
    """Plain gradient descent from ``START``; returns the loss of every step."""
    center = mt.variable(START)
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(center))
            center.assign_sub(grads[center] * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    mt.dispose(center)
    return losses
