"""Solution: exercise 4c, a custom gradient with the wrong shape and the wrong sign (chapter 4).

The output x - b depends on b with the factor -1, so its gradient is -dy,
and b was broadcast over the rows, so the contributions of all the rows add
up: the sum of -dy over axis 0, of shape (3,).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex04c_broadcast_vjp.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04c_broadcast_vjp"  # the grader reads this: do not change it

X = mt.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [-2.0, 0.0, 1.0], [1.5, 1.5, -0.5]])
B = mt.tensor([0.5, 1.0, -1.0])


@mt.custom_grad
def center(x: mt.Tensor, b: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
    """x - b, with b of shape (columns,) broadcast over the rows of x."""

    def grad_fn(dy: mt.Tensor) -> list[mt.Tensor]:
        return [dy, -dy.sum(axis=0)]  # minus, and summed over the rows b was broadcast over

    return x - b, grad_fn


def model(x: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    """Mean of the squared centred values: smallest when b is the column means."""
    return (center(x, b) ** 2).mean()
