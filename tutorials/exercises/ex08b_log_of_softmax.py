"""Exercise 8b: the log of a softmax, patched with an epsilon that kills the gradient.

Chapter 8, "Casebook: real gradient bugs", section "Case 5: the log of a softmax".

``cross_entropy`` is the mean over the rows of −Σ labels · log(softmax(z)),
for one-hot ``labels``. Someone met NaN when the logits were far apart (a
probability rounds to exactly 0) and added ``1e-7`` inside the log. The NaN
is gone, but run this file: at the logits ``Z`` the loss is wrong, and the
gradient is 0 exactly where the model is most wrong.

1. Rewrite ``cross_entropy`` so that its value is exact, and finite, for
   logits as far apart as ±1000, and its gradient with respect to the
   logits is (softmax(z) − labels) / rows. No epsilon: compute the log of
   the probabilities without forming the probabilities (chapter 8 names
   the op). Keep the name, the arguments and the mean over the rows.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08b_log_of_softmax.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08b_log_of_softmax"  # the grader reads this: do not change it

LABELS = mt.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
Z = mt.tensor([[1000.0, 0.0, -1000.0], [0.5, -0.5, 2.0]])  # the first row is far apart


def cross_entropy(labels: mt.Tensor, z: mt.Tensor) -> mt.Tensor:
    """The mean over the rows of -sum(labels * log(softmax(z)))."""
    return -(labels * mt.log(mt.softmax(z) + 1e-7)).sum(axis=-1).mean()  # TODO 1: no epsilon, no zero probability


if __name__ == "__main__":
    print(mt.value_and_grad(lambda z: cross_entropy(LABELS, z))(Z))
