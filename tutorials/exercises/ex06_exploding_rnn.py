"""Exercise 6: tame an exploding recurrent net with gradient clipping.

Chapter 6, "In practice" (Практическое применение).

A linear recurrent net runs h ← w·h + u·x over 20 time steps. With
``|w| > 1``, h grows like wᵗ, and so does the gradient: at the starting point
W0 = 1.25 its norm is in the tens of thousands. One plain SGD step then
jumps so far that the next loss is astronomically large, and a few steps
later it is inf and NaN.
Clipping rescales the gradients so their joint (global) norm is at most
``max_norm``: the direction is kept, the step length is bounded.

1. ``clipped_grads(grads, max_norm)``: rescale the list of gradients
   together so their global L2 norm is at most ``max_norm``; gradients that
   are already small come back unchanged. ``mt.clip_by_global_norm`` does
   the work (it returns ``(clipped, global_norm)``).
2. In ``train_rnn``, record the *raw* gradients of every step in the
   ``mt.GradientMonitor`` before clipping them, so the monitor shows the
   explosion that the clipping hides: ``monitor.record({"w": ..., "u": ...})``.
   Afterwards ``print(monitor.report())`` draws the norms as sparklines.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex06_exploding_rnn.py
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
    raise NotImplementedError("TODO 1: return the gradients rescaled together so their global norm is at most max_norm")


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
            # TODO 2: record the raw gradients in the monitor here, before clipping.
            dw, du = clipped_grads(raw, max_norm)
            w.assign_sub(dw * lr)
            u.assign_sub(du * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    return losses, monitor
