"""Solution: exercise 6, tame an exploding recurrent net with clipping (chapter 6).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex06_exploding_rnn.py``
"""

from __future__ import annotations

import math

import microtape as mt

EXERCISE = "ex06_exploding_rnn"  # the grader reads this: do not change it

STEPS_IN_TIME = 20
XS = [math.sin(0.5 * t) + 1.0 for t in range(STEPS_IN_TIME)]
W0, U0 = 1.25, 0.5  # the starting weights: |w| > 1, so h grows like w^t


def _unroll(w: float, u: float) -> float:
    h = 0.0
    for x in XS:
        h = w * h + u * x
    return h


TARGET = _unroll(0.9, 0.5)  # made by w = 0.9, u = 0.5


def loss_fn(w: mt.Tensor, u: mt.Tensor) -> mt.Tensor:
    """Run the linear recurrent net h ← w·h + u·x over XS; squared error of the last h."""
    h = mt.scalar(0.0)
    for x in XS:
        h = w * h + u * x
    return (h - TARGET) ** 2


def clipped_grads(grads: list[mt.Tensor], max_norm: float) -> list[mt.Tensor]:
    """Rescale the gradients together so their global L2 norm is at most ``max_norm``."""
    clipped, _ = mt.clip_by_global_norm(grads, max_norm)
    return clipped


def train_rnn(steps: int, lr: float, max_norm: float) -> tuple[list[float], mt.GradientMonitor]:
    """SGD with clipping; returns the losses and a monitor of the raw gradients."""
    w = mt.variable(W0)
    u = mt.variable(U0)
    monitor = mt.GradientMonitor()
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(w, u))
            raw = [grads[w], grads[u]]
            monitor.record({"w": raw[0], "u": raw[1]})  # the raw norms: see the explosion
            dw, du = clipped_grads(raw, max_norm)
            w.assign_sub(dw * lr)
            u.assign_sub(du * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    return losses, monitor
