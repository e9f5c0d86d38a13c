"""Solution: exercise 3b, a tape that returns None, and a tape asked twice (chapter 3).

A tape records operations on variables by itself, but a plain tensor only
after ``tape.watch(x)``; without it, ``tape.gradient(y, x)`` is None. A tape
answers once unless it is made with ``persistent=True`` (and then released);
asking for all three gradients in one call works too.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex03b_unwatched_tensor.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex03b_unwatched_tensor"  # the grader reads this: do not change it

W = mt.variable([[0.5, -1.0, 0.25], [1.5, 0.5, -0.5]])
V = mt.variable([[1.0], [-2.0], [0.5]])


def model(x: mt.Tensor) -> mt.Tensor:
    """sum(tanh(x @ W) @ V) for a batch x of shape (n, 2)."""
    return (mt.tanh(x @ W) @ V).sum()


def input_gradient(x: mt.Tensor) -> mt.Tensor | None:
    """d model(x) / dx, with the shape of x."""
    with mt.GradientTape() as tape:
        tape.watch(x)  # a plain tensor is recorded only when watched
        y = model(x)
    return tape.gradient(y, x)


def all_gradients(x: mt.Tensor) -> tuple[mt.Tensor | None, mt.Tensor | None, mt.Tensor | None]:
    """The gradients of model(x) with respect to x, W and V."""
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    dx, dw, dv = tape.gradient(y, [x, W, V])  # one question: a tape answers once
    return dx, dw, dv
