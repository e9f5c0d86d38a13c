"""Solution: exercise 5c, a training loop that leaked (chapter 5).

``leak_check`` named two lines. ``mt.scalar(lr)`` ran outside the tidy, a
new tensor every step: a Python float needs no tensor at all. And the loss
tensor was returned from the tidy, so it survived, and the history held one
per step: returning ``loss.item()`` keeps a float instead.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex05c_leaky_loop.py``
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

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(w))
            w.assign_sub(grads[w] * lr)  # a float: no tensor made outside the tidy
            return loss.item()  # a float survives the tidy; the loss tensor does not

        history.append(mt.tidy(step))
    return history
