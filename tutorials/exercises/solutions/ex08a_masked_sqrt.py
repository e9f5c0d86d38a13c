"""Solution: exercise 8a, a where that hides a square root (chapter 8).

``detect_anomaly`` names ``sqrt`` in the forward pass: ``where`` computes
both branches, so ``sqrt(-4.0)`` is NaN even though ``where`` throws it away.
On the way back ``where`` sends 0 to that entry, and ``sqrt``'s VJP makes
0 · NaN = NaN (and 0 · inf at 0). A second ``where`` gives ``sqrt`` a safe
input (1.0) at the entries the outer one discards: no NaN is ever made.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08a_masked_sqrt.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08a_masked_sqrt"  # the grader reads this: do not change it

X = mt.tensor([-4.0, 0.0, 2.25, 9.0])


def rooted(x: mt.Tensor) -> mt.Tensor:
    """√x where x > 0, and 0 elsewhere."""
    safe = mt.where(x.greater(0.0), x, mt.ones_like(x))  # sqrt never sees a number <= 0
    return mt.where(x.greater(0.0), mt.sqrt(safe), mt.zeros_like(x))


if __name__ == "__main__":
    print(mt.grad(lambda x: rooted(x).sum())(X))
