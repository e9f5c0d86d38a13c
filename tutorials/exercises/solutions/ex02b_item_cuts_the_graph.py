"""Solution: exercise 2b, the gradient that never reached w (chapter 2).

``w.item()`` turned w into a Python float, and ``math.tanh`` of a float is a
constant to autodiff, so ``variable_grads`` had no gradient for w and only b
trained. ``mt.tanh(w)`` keeps the path.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex02b_item_cuts_the_graph.py``
"""

from __future__ import annotations

import math

import microtape as mt

EXERCISE = "ex02b_item_cuts_the_graph"  # the grader reads this: do not change it

A = 2.0
XS = [-1.0, 0.0, 1.0, 2.0, 3.0]
X = mt.tensor(XS)
Y = mt.tensor([A * math.tanh(0.6) * x + 0.5 for x in XS])  # made by w = 0.6, b = 0.5


def predict(w: mt.Tensor, b: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    """The model A·tanh(w)·x + b."""
    slope = A * mt.tanh(w)  # a microtape op: the tape sees the path from w
    return x * slope + b


def loss_fn(w: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    """Mean squared error of the model on X, Y."""
    return ((predict(w, b, X) - Y) ** 2).mean()


def train(steps: int, lr: float) -> tuple[float, float]:
    """Plain SGD from w = b = 0; returns the final (w, b)."""
    w, b = mt.variable(0.0), mt.variable(0.0)
    for _ in range(steps):

        def step() -> None:
            _, grads = mt.variable_grads(lambda: loss_fn(w, b))
            for variable, gradient in grads.pairs():
                variable.assign_sub(gradient * lr)

        mt.tidy(step)
    return w.item(), b.item()
