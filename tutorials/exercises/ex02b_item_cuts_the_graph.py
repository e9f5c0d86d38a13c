"""Exercise 2b: training moves b but never w; find where the gradient is lost.

Chapter 2, "Automatic gradients" (Автоматическое вычисление градиентов).

The model is y = A·tanh(w)·x + b (tanh keeps the slope between -A and A).
``train`` fits it with ``mt.variable_grads`` and plain SGD, and nothing
crashes, but w stays at 0 however long it trains: only b learns. Ask for
the gradients and look at which variables have one::

    w, b = mt.variable(0.3), mt.variable(0.0)
    loss, grads = mt.variable_grads(lambda: loss_fn(w, b))
    print(grads.keys())

Autodiff follows microtape ops only. A value read out as a Python number on
the way from w to the loss is a constant to it, so the path from w is cut.

1. Repair the model so that the gradient reaches w. Keep the maths: the
   loss must have the same values as before.
2. Afterwards ``train(200, 0.1)`` fits both w and b.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex02b_item_cuts_the_graph.py
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
    slope = A * math.tanh(w.item())
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
