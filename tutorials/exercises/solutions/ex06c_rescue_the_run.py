"""Solution: exercise 6c, rescue an exploding recurrent net with clipping (chapter 6).

The monitor shows global norms in the millions at the start: one plain step
throws w far beyond 1, where h grows like wᵗ. Clipping the global norm to 1
bounds every step to lr · 1 and keeps the direction; the run converges.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex06c_rescue_the_run.py``
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
            gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)  # each step at most lr long
            opt.apply_gradients(list(zip(gs, [w, u])))
            return loss.item()

        losses.append(mt.tidy(step))
    opt.dispose()
    mt.dispose([w, u])
    return losses
