"""Exercise 4c: a custom gradient with the wrong shape, and then the wrong sign.

Chapter 4, "Checking gradients" (Проверка градиентов).

``center(x, b)`` subtracts a per-column offset b (shape (3,)) from every
row of a batch x (shape (n, 3)): b is broadcast over the rows. Its
hand-written VJP has two bugs. The first one is loud: run ::

    mt.grads(model)([X, B])

and read the ``ShapeError`` (``print(mt.check_grads(center, [X, B]))``
says the same in its notes). The second bug is silent: it shows only in
the gradient checker's table, once the first one is fixed.

Repair the VJP until ``mt.check_grads(center, [X, B]).ok`` is True and
``model`` trains. Change only the gradient, not the forward value, and
keep ``center`` a single ``custom_grad`` op.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex04c_broadcast_vjp.py
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
        return [dy, dy]

    return x - b, grad_fn


def model(x: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    """Mean of the squared centred values: smallest when b is the column means."""
    return (center(x, b) ** 2).mean()
