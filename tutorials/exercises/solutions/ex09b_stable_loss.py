"""Solution: exercise 9b, a binary cross-entropy stable on logits (chapter 9).

With p = σ(z), −log σ(z) = softplus(−z) and −log(1 − σ(z)) = softplus(z), and
softplus(−z) = softplus(z) − z, so the loss per entry is softplus(z) − z·y.
``mt.softplus`` computes log(1 + eᶻ) as max(z, 0) + log1p(e^(−|z|)), which
never overflows, so the value and the gradient σ(z) − y stay finite.
(``mt.sigmoid_cross_entropy(labels, logits)`` gives the same.)

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex09b_stable_loss.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex09b_stable_loss"  # the grader reads this: do not change it

LABELS = mt.tensor([0.0, 1.0, 0.0, 1.0])
LOGITS = mt.tensor([2.0, -3.0, 40.0, -800.0])  # the last two are large: the loss is inf


def bce(labels: mt.Tensor, logits: mt.Tensor) -> mt.Tensor:
    """The mean binary cross-entropy of labels and sigmoid(logits)."""
    return (mt.softplus(logits) - logits * labels).mean()


if __name__ == "__main__":
    print(mt.value_and_grad(lambda z: bce(LABELS, z))(LOGITS))
