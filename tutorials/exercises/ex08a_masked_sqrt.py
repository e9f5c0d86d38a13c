"""Exercise 8a: a ``where`` that hides a square root, and still a NaN gradient.

Chapter 8, "Casebook: real gradient bugs", section "Case 1: a where that hides the square root of a negative number".

``rooted`` takes the square root of the positive entries of ``x`` and puts
0 in the others, with ``mt.where``. Its values are right. Its gradient is
NaN at every entry that is not positive, though the result does not depend
on ``x`` there. Run this file, then run the gradient under
``mt.detect_anomaly()`` to see which op and which pass make the NaN.

1. Repair ``rooted`` so that its gradient is finite everywhere: the slope
   of the square root where ``x`` is positive, and 0 at zero and below.
   Its values must stay what they are. Do not shift ``x`` by a small
   number: the values would move.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08a_masked_sqrt.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08a_masked_sqrt"  # the grader reads this: do not change it

X = mt.tensor([-4.0, 0.0, 2.25, 9.0])


def rooted(x: mt.Tensor) -> mt.Tensor:
    """√x where x > 0, and 0 elsewhere."""
    return mt.where(x.greater(0.0), mt.sqrt(x), mt.zeros_like(x))  # TODO 1: a NaN leaks through the branch not taken


if __name__ == "__main__":
    print(mt.grad(lambda x: rooted(x).sum())(X))
