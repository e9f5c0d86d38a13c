"""Solution: exercise 1, variables and an in-place SGD step (chapter 1).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex01_variables_sgd.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex01_variables_sgd"  # the grader reads this: do not change it


def make_weights(values: list[float]) -> mt.Variable:
    """A trainable variable holding ``values`` (no fixed name, so it can be made twice)."""
    return mt.variable(values)


def make_step_counter() -> mt.Variable:
    """A scalar that starts at 0 and that no optimizer may train."""
    return mt.variable(0.0, trainable=False)


def sgd_step(w: mt.Variable, grad: mt.Tensor, lr: float) -> None:
    """w ← w - lr·grad, in place: the same variable object gets new values."""
    w.assign_sub(grad * lr)


def count_step(counter: mt.Variable) -> None:
    """Add 1 to the counter, in place."""
    counter.assign_add(1.0)
