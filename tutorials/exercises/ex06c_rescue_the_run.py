"""Exercise 6c: rescue a recurrent net whose training blows up.

Chapter 6, "In practice" (Практическое применение).

``train`` fits a linear recurrent net, h ← w·h + u·x over 30 time steps,
with an optimizer from ``mt.train``. The gradients are right (check them
with ``mt.check_grads``), yet after a step or two the loss is astronomically
large and then ``inf`` or ``nan``. Record the gradient norms with a
``mt.GradientMonitor`` and print its ``report()`` to see what happens::

    monitor = mt.GradientMonitor()   # monitor.record(grads) in every step

Repair ``train`` with one of chapter 6's tools so that it converges, without
changing the model, the starting point, the optimizer or the learning rate
it is given: ``train(150, 0.05)`` must return 150 finite losses, the best
of the last ten more than 1000 times smaller than the first.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex06c_rescue_the_run.py
"""

from __future__ import annotations

import math

import microtape as mt

EXERCISE = "ex06c_rescue_the_run"  # the grader reads this: do not change it

XS = [math.cos(0.3 * t) + 0.5 for t in range(30)]
W0, U0 = 1.2, 0.3  # |w| > 1: h grows like w^t


def unroll(w: float, u: float) -> float:
    """The last hidden state, in plain Python."""
    h = 0.0
    for x in XS:
        h = w * h + u * x
    return h


TARGET = unroll(0.8, 0.4)


def loss_fn(w: mt.Tensor, u: mt.Tensor) -> mt.Tensor:
    """Squared error of the last hidden state of the recurrent net."""
    h = mt.scalar(0.0)
    for x in XS:
        h = w * h + u * x
    return (h - TARGET) ** 2


def train(steps: int, lr: float) -> list[float]:
    """SGD from (W0, U0); returns the loss of every step."""
    w, u = mt.variable(W0), mt.variable(U0)
    opt = mt.train.sgd(lr)
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(w, u))
            gs: list[mt.Tensor | None] = [grads[w], grads[u]]
            opt.apply_gradients(list(zip(gs, [w, u])))
            return loss.item()

        losses.append(mt.tidy(step))
    opt.dispose()
    mt.dispose([w, u])
    return losses
