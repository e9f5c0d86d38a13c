"""Solution: exercise 8c, a ReLU on the output layer (chapter 8).

Every output starts negative, where the ReLU's derivative is 0, so every
entry of the gradient is 0 (``grad_stats``: zeros 100.0%), and gradient
descent never moves: a dead unit. A regression output needs no activation;
without the ReLU the gradient is 2/n · Xᵀ(Xw − Y), alive everywhere.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08c_dead_relu.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex08c_dead_relu"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0], [0.5, 1.5], [2.0, 0.5]])
Y = mt.tensor([[1.0], [0.8], [1.1]])
START = mt.tensor([[-0.5], [-0.8]])  # every output starts negative

ZERO_SHARE = 100.0  # grad_stats: "zeros 100.0%": every entry of the gradient is 0


def predict(x: mt.Tensor, w: mt.Tensor) -> mt.Tensor:
    """The model's outputs for the rows of ``x``, shape (rows, 1)."""
    return x @ w  # no ReLU: the output may be negative, and its gradient lives


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
