"""Exercise 8c: a regression net that never learns, with a ReLU on its output.

Chapter 8, "Casebook: real gradient bugs", section "Case 9: a ReLU on the output layer".

``fit`` trains a linear regression, ``predict``, by gradient descent on the
mean squared error, from the weights ``START``. Run this file: the loss does
not move at all. The outputs start negative, and the model puts a ReLU on
them.

1. Run ``mt.grad_stats`` on the gradients of the first step (``grads`` of
   ``mt.variable_grads(lambda: loss_fn(w))`` with ``w = mt.variable(START,
   name="w")``) and set ``ZERO_SHARE`` to the share of zero entries it
   reports for ``w``, in per cent, as a number.
2. Repair ``predict``: a regression output can be any real number, so it
   needs no activation. Keep ``loss_fn`` and ``fit`` as they are; then the
   loss of ``fit(30, 0.1)`` falls.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08c_dead_relu.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08c_dead_relu"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [0.5, 1.5], [2.0, 0.5]])
Y = mt.tensor([[1.0], [0.8], [1.1]])
START = mt.tensor([[-0.5], [-0.8]])  # every output starts negative

ZERO_SHARE = "TODO 1: the share of zeros grad_stats reports for w, in per cent"


def predict(x: mt.Tensor, w: mt.Tensor) -> mt.Tensor:
    """The model's outputs for the rows of ``x``, shape (rows, 1)."""
    return mt.relu(x @ w)  # TODO 2: a regression output needs no activation


def loss_fn(w: mt.Tensor) -> mt.Tensor:
    """The mean squared error of ``predict`` on ``X`` and ``Y``."""
    return (predict(X, w) - Y).square().mean()


def fit(steps: int, lr: float) -> list[float]:
    """Plain gradient descent from ``START``; returns the loss of every step."""
    w = mt.variable(START)
    losses: list[float] = []
    for _ in range(steps):

        def step() -> float:
            loss, grads = mt.variable_grads(lambda: loss_fn(w))
            w.assign_sub(grads[w] * lr)
            return loss.item()

        losses.append(mt.tidy(step))
    mt.dispose(w)
    return losses


if __name__ == "__main__":
    print(fit(5, 0.1))
