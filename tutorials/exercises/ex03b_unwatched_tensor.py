"""Exercise 3b: a tape that returns None, and a tape asked twice.

Chapter 3, "The tape" (Отслеживание операций с tf.GradientTape).

``model(x)`` is a tiny network with trainable weights W and V. Two helpers
ask a ``GradientTape`` for gradients, and both are broken:

* ``input_gradient(x)`` should return d model(x) / dx, how the output
  reacts to each input (a "saliency map"). It returns None.
* ``all_gradients(x)`` should return the gradients with respect to x, W and
  V. It raises an error on its second question to the tape.

Run them, read what comes back and the error message, and repair both.
Chapter 3 explains what a tape records by itself, what it records only when
asked, and how many times it answers.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex03b_unwatched_tensor.py
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
        y = model(x)
    return tape.gradient(y, x)


def all_gradients(x: mt.Tensor) -> tuple[mt.Tensor | None, mt.Tensor | None, mt.Tensor | None]:
    """The gradients of model(x) with respect to x, W and V."""
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    dx = tape.gradient(y, x)
    dw = tape.gradient(y, W)
    dv = tape.gradient(y, V)
    return dx, dw, dv
