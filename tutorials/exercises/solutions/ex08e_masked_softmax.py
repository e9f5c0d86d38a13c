"""Solution: exercise 8e, a softmax over a row masked completely (chapter 8).

``detect_anomaly`` names ``sub`` in the forward pass: softmax subtracts
each row's maximum to keep ``exp`` from overflowing, and in a row that is
all −∞ that is −∞ − (−∞) = NaN. The outer ``where`` hides the NaN values,
but on the way back softmax's VJP multiplies by its NaN output, and the
add passes that NaN on to every score of the row. A finite mask, −1e9,
keeps the arithmetic finite: a kept score is never near −1e9, so ``exp`` of
a masked one is exactly 0, and a row with nothing kept becomes a finite
softmax, which the outer ``where`` sets to 0 (and sends no gradient).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08e_masked_softmax.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08e_masked_softmax"  # the grader reads this: do not change it

SCORES = mt.tensor([[0.3, 1.2, -0.4], [2.0, -1.0, 0.5]])
KEEP = mt.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # the second row looks at nothing


def masked_softmax(scores: mt.Tensor, keep: mt.Tensor) -> mt.Tensor:
    """The softmax of each row over its kept entries, 0 at the masked ones."""
    bias = mt.where(keep.greater(0.5), mt.zeros_like(scores), mt.zeros_like(scores) - 1e9)  # finite: exp(-1e9 - max) is exactly 0
    return mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores))


if __name__ == "__main__":
    print(mt.grad(lambda s: (masked_softmax(s, KEEP) * mt.tensor([1.0, 2.0, 3.0])).sum())(SCORES))
