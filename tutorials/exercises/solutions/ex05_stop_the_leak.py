"""Solution: exercise 5, stop a leak with ``tidy`` (chapter 5).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex05_stop_the_leak.py``
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

    def step() -> float:
        loss, grads = mt.variable_grads(lambda: mse(predict(w, X), Y))
        w.assign(w - lr * grads[w])
        return loss.item()  # a float: every tensor made in here is disposed

    return mt.tidy(step)


def evaluate(w: mt.Tensor) -> float:
    """The loss at w, as a float, leaving no tensor behind."""
    return mt.tidy(lambda: mse(predict(w, X), Y).item())
