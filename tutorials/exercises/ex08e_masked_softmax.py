"""Exercise 8e: attention with a row that may look at nothing.

Chapter 8, "Casebook: real gradient bugs", section "Case 6: a softmax over a row that is masked completely".

``masked_softmax`` takes a softmax over each row's kept entries (``keep``
holds 1.0 to keep an entry and 0.0 to mask it out) and puts 0 at the
masked ones: a row with nothing kept is all 0. It adds −∞ to the masked
scores, as attention code often does. Its values are right; run this
file: the gradient is NaN in the row that is masked completely.

1. Find the first NaN with ``mt.detect_anomaly()`` (which op, which pass).
2. Repair ``masked_softmax`` so that its gradient is finite and right,
   with the same values: a masked entry gets no gradient, and a kept one
   the softmax's. No ``inf`` may enter the softmax (a large negative
   number masks as well, and its arithmetic stays finite).

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08e_masked_softmax.py
"""

from __future__ import annotations

import math

import microtape as mt

EXERCISE = "ex08e_masked_softmax"  # the grader reads this: do not change it

SCORES = mt.tensor([[0.3, 1.2, -0.4], [2.0, -1.0, 0.5]])
KEEP = mt.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # the second row looks at nothing


def masked_softmax(scores: mt.Tensor, keep: mt.Tensor) -> mt.Tensor:
    """The softmax of each row over its kept entries, 0 at the masked ones."""
    bias = mt.where(keep.greater(0.5), mt.zeros_like(scores), mt.zeros_like(scores) - math.inf)  # TODO 1: -inf - (-inf) is NaN
    return mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores))


if __name__ == "__main__":
    print(mt.grad(lambda s: (masked_softmax(s, KEEP) * mt.tensor([1.0, 2.0, 3.0])).sum())(SCORES))
