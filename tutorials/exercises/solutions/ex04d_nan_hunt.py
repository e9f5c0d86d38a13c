"""Solution: exercise 4d, a NaN hunt with ``detect_anomaly`` (chapter 4).

``detect_anomaly`` stops at ``exp`` in ``log_sum_exp``: a logit above ~709
overflows to inf, and log(inf) - inf is nan. Subtracting the row maximum m
first keeps every exponent at most 0 and gives the same value, because
log(Σ eᶻ) = m + log(Σ eᶻ⁻ᵐ). (``mt.logsumexp(z, axis=-1, keepdims=True)``
does the same.)

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex04d_nan_hunt.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex04d_nan_hunt"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [2.0, -1.0], [-1.5, 0.5], [0.5, 1.5], [-2.0, -1.0], [3.0, 0.0]])
LABELS = mt.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
SCALE = 40.0  # the inputs are multiplied by this: large logits


def log_sum_exp(z: mt.Tensor) -> mt.Tensor:
    """log(Σ exp(z)) over the last axis, one value per row, shape (rows, 1)."""
    top = z.max(axis=-1, keepdims=True)
    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))  # every exponent <= 0


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
