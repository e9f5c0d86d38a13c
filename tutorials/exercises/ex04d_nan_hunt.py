"""Exercise 4d: a NaN hunt with ``detect_anomaly``.

Chapter 4, "Checking gradients" (Проверка градиентов).

``train`` fits a tiny softmax classifier. Its first step is fine,
then the loss turns into ``nan`` and stays there. Nothing crashes, so the
question is which op made the first NaN or Inf, and why. Run the training
under the anomaly detector::

    with mt.detect_anomaly():
        train(100, 0.5)

It stops at the first op whose output (forward pass) or gradient (backward
pass) is not finite, and names the op, its input ranges and your line.

1. Repair ``log_sum_exp`` so that it gives the right value, and a finite
   gradient, for large inputs too (it is fine at small ones). The value
   must stay log(Σ eˣ) exactly, not an approximation. Writing the stable
   form yourself teaches the most, but calling microtape's own stable op
   (the one the error message suggests) counts as a repair too.
2. Afterwards ``train(100, 0.5)`` runs to the end, and its losses are those
   of plain SGD on this model (keep ``loss_fn`` and ``train`` as they are).

Check your work (in the folder that holds this file)::

    python -m microtape grade ex04d_nan_hunt.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex04d_nan_hunt"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [2.0, -1.0], [-1.5, 0.5], [0.5, 1.5], [-2.0, -1.0], [3.0, 0.0]])
LABELS = mt.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
SCALE = 40.0  # the inputs are multiplied by this: large logits


def log_sum_exp(z: mt.Tensor) -> mt.Tensor:
    """log(Σ exp(z)) over the last axis, one value per row, shape (rows, 1)."""
    return mt.log(mt.exp(z).sum(axis=-1, keepdims=True))


def loss_fn(w: mt.Tensor) -> mt.Tensor:
    """Cross-entropy of softmax(SCALE · X @ w) against LABELS."""
    logits = (X * SCALE) @ w
    log_probs = logits - log_sum_exp(logits)
    return -(log_probs * LABELS).sum(axis=-1).mean()


def train(steps: int, lr: float) -> list[float]:
    """Plain SGD from small weights; returns the loss of every step."""
    w = mt.variable([[0.01, -0.02, 0.0], [0.0, 0.01, -0.01]])
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(w))
            w.assign_sub(grads[w] * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    return losses
