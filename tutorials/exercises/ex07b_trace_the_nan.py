"""Exercise 7b: trace a NaN back to where it came from.

Chapter 7, "Analysis tools" (Встроенные функции для анализа).

``fit`` moves a center towards a cloud of points by gradient descent on
the mean distance from the center to the points. It starts the center
exactly on one of the points. The loss of the first step is fine, yet every
loss after it is ``nan``, and nothing crashes. Find where the first
non-finite value came from with the trace of ``detect_anomaly``::

    with mt.detect_anomaly(mode="trace") as trace:
        fit(3, 0.1)
    print(trace)

It raises nothing. It names the first op that made a NaN or an Inf, the
pass, the entry, the input values and the line of this file, and then every
op that value spread through.

1. Set ``FIRST_OP`` and ``FIRST_PASS`` to the op and the pass
   (``"forward"`` or ``"backward"``) that the trace names first.
2. Repair ``distance`` so that its gradient is finite everywhere, a point
   on the center included, while its values stay within 1e-6 of the exact
   distances. Afterwards ``fit(50, 0.1)`` runs to the end, and its losses
   are finite and fall (keep ``loss_fn`` and ``fit`` as they are).

Check your work (in the folder that holds this file)::

    python -m microtape grade ex07b_trace_the_nan.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex07b_trace_the_nan"  # the grader reads this: do not change it

POINTS = mt.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0], [-1.0, -1.0]])
START = [0.0, 0.0]  # exactly on the first point

FIRST_OP = "TODO 1: the op the trace names first, e.g. 'exp'"
FIRST_PASS = "TODO 1: 'forward' or 'backward'"


def distance(points: mt.Tensor, center: mt.Tensor) -> mt.Tensor:
    """The Euclidean distance from each point (a row) to ``center``, shape (rows,)."""
    return mt.sqrt(((points - center) ** 2.0).sum(axis=1))


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
