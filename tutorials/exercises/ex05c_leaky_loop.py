"""Exercise 5c: a training loop that leaks; find the leaks with ``leak_check``.

Chapter 5, "The computation graph" (Особенности работы с графом вычислений).

``fit`` below trains correctly, and every step runs inside ``mt.tidy``, yet
``mt.memory().num_tensors`` grows with every step. ``tidy`` is not the whole
story: it disposes only what is made *inside* it and *not returned*. Let the
leak checker say what is left and which lines made it::

    with mt.leak_check():
        fit(mt.variable([[0.0], [0.0]]), 5, 0.1)

Repair ``fit`` so that it leaves nothing behind, however many steps it
takes, and still returns the same losses (as Python floats) and trains the
weights the same way.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex05c_leaky_loop.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex05c_leaky_loop"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [2.0, 0.5], [-1.0, 1.0], [0.5, -2.0], [1.5, 1.0]])
Y = mt.tensor([[3.0], [2.5], [-0.5], [-1.0], [2.5]])


def loss_fn(w: mt.Tensor) -> mt.Tensor:
    """Mean squared error of X @ w against Y."""
    return ((X @ w - Y) ** 2).mean()


def fit(w: mt.Variable, steps: int, lr: float) -> list[float]:
    """Plain SGD on w; returns the loss before every step, as floats."""
    history = []
    for _ in range(steps):
        rate = mt.scalar(lr)

        def step() -> mt.Tensor:
            loss, grads = mt.variable_grads(lambda: loss_fn(w))
            w.assign_sub(grads[w] * rate)
            return loss

        history.append(mt.tidy(step))
    return [loss.item() for loss in history]
