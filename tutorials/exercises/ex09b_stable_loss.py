"""Exercise 9b: rewrite a binary cross-entropy so that it is stable on logits.

Chapter 9, "Numerics: stable losses, modes and precision", section "Cross-entropy on logits, not on probabilities".

``bce`` below is the binary cross-entropy of ``labels`` (numbers from 0 to
1) and the sigmoid of ``logits``, averaged over every entry, written as it
reads on paper. It is right for small logits. Above about 37, 1 − σ(z) is
exactly 0.0 in float64, its log is −∞, and the loss and its gradient are
``inf`` and NaN. For very negative logits the same happens to σ(z) itself.

1. Rewrite ``bce`` on the logits alone, so that its value is right, and
   finite, for logits as large as ±1000: no ``exp`` of a large positive
   number, no log of a number that can round to 0. Writing the stable
   form yourself teaches the most, but a microtape op that computes it
   counts too. Keep the name, the arguments and the mean over every entry.
2. Its gradient with respect to the logits is then (σ(z) − labels) / n
   (n entries), finite everywhere: the tape differentiates your rewrite,
   so write it with microtape ops on tensors.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex09b_stable_loss.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex09b_stable_loss"  # the grader reads this: do not change it

LABELS = mt.tensor([0.0, 1.0, 0.0, 1.0])
LOGITS = mt.tensor([2.0, -3.0, 40.0, -800.0])  # the last two are large: the loss is inf


def bce(labels: mt.Tensor, logits: mt.Tensor) -> mt.Tensor:
    """The mean binary cross-entropy of labels and sigmoid(logits)."""
    p = mt.sigmoid(logits)
    return -(labels * mt.log(p) + (1.0 - labels) * mt.log(1.0 - p)).mean()  # TODO 1: make it stable on the logits


if __name__ == "__main__":
    print(mt.value_and_grad(lambda z: bce(LABELS, z))(LOGITS))
