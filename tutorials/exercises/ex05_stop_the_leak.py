"""Exercise 5: stop a leak with ``tidy``.

Chapter 5, "The computation graph" (Особенности работы с графом вычислений).

``train_step`` below is correct, but every call leaves tensors alive: the
loss, the gradient and every piece of ``w - lr * grad``. ``evaluate`` leaks
too, through the helpers it calls (``predict`` and ``mse`` make tensors
that nobody disposes). Watch it happen::

    w = mt.variable([[0.0], [0.0]])
    for _ in range(3):
        train_step(w, 0.1)
        print(mt.memory().num_tensors)     # grows every step

and ``with mt.leak_check(): train_step(w, 0.1)`` names the ops and lines.

1. Make ``train_step`` leave nothing behind: run its body inside
   ``mt.tidy`` and return a Python float, so ``num_tensors`` stays flat.
2. Do the same for ``evaluate``.

Keep the maths as it is: the grader checks the loss and the update too.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex05_stop_the_leak.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex05_stop_the_leak"  # the grader reads this: do not change it

X = mt.tensor2d([[1.0, 2.0], [2.0, 0.5], [-1.0, 1.0], [0.5, -2.0]])
Y = mt.tensor2d([[2.5], [1.25], [1.0], [-2.0]])


def predict(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    """A linear model: x @ w."""
    return x @ w


def mse(pred: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
    """Mean squared error."""
    diff = pred - y
    return (diff * diff).mean()


def train_step(w: mt.Variable, lr: float) -> float:
    """One SGD step on mse(predict(w, X), Y); returns the loss before the step."""
    # TODO 1: this step is right, but every call leaves tensors alive; make it leave none.
    loss, grads = mt.variable_grads(lambda: mse(predict(w, X), Y))
    w.assign(w - lr * grads[w])
    return loss.item()


def evaluate(w: mt.Tensor) -> float:
    """The loss at w, as a float."""
    # TODO 2: this leaks every tensor that predict and mse make; make it leave none.
    return mse(predict(w, X), Y).item()
