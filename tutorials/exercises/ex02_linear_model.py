"""Exercise 2: ``variable_grads`` on the linear model, inside ``tidy``.

Chapter 2, "Automatic gradients" (Автоматическое вычисление градиентов).

Fit y = w·x + b to x = [1, 2, 3, 4], y = [1, 3, 5, 7] (the answer is
w = 2, b = -1) with the mean squared error and plain SGD. Every step makes
tensors; ``tidy`` disposes the ones you do not return, so memory stays flat.

1. ``loss_fn(w, b)``: the mean of (w·X + b - Y)².
2. ``gradients(w, b)``: use ``mt.variable_grads`` to get (dL/dw, dL/db)
   and return them. Run it inside ``mt.tidy`` so that these two tensors are
   the only ones left alive by a call (the loss value must not survive).
3. ``train(steps, lr)``: make w and b (from 0.0), take ``steps`` SGD steps
   with ``gradients``, and return the final (w, b) as floats. Training must
   leave no tensor behind: put each step inside ``mt.tidy``.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex02_linear_model.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex02_linear_model"  # the grader reads this: do not change it

X = mt.tensor([1.0, 2.0, 3.0, 4.0])
Y = mt.tensor([1.0, 3.0, 5.0, 7.0])


def loss_fn(w: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    """Mean squared error of the prediction ``w*X + b`` against ``Y``."""
    raise NotImplementedError("TODO 1: return the mean squared error of the prediction w*X + b against Y")


def gradients(w: mt.Variable, b: mt.Variable) -> tuple[mt.Tensor, mt.Tensor]:
    """Return (dL/dw, dL/db); nothing else made here may stay alive."""
    raise NotImplementedError("TODO 2: return (dL/dw, dL/db) from mt.variable_grads, leaving only those two tensors alive")


def train(steps: int, lr: float) -> tuple[float, float]:
    """Fit w and b from 0 with ``steps`` SGD steps; return the final (w, b)."""
    raise NotImplementedError("TODO 3: fit w and b from 0 with `steps` SGD steps, leaving no tensor behind; return (w, b) as floats")
