"""Solution: exercise 4e, find the wrong factor with explain_gradient and fix it (chapter 4).

``print(mt.explain_gradient(energy, [X], index=2))`` shows one path: sum
(factor 1), the ``* 2.0`` (factor 2), softsign (1 / (1 + |x³|)² at x³ = -8,
so 1/81) and cube with the factor -6.0. The derivative of x³ at -2 is
3·x² = 12: cube's VJP multiplied by 3·x instead of 3·x².

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex04e_wrong_factor.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04e_wrong_factor"  # the grader reads this: do not change it

VJP = Callable[[mt.Tensor], mt.Tensor]  # grad_fn(dy)

X = mt.tensor([0.5, 1.5, -2.0])

WRONG_OP = "custom_grad(cube)"
WRONG_FACTOR = -6.0  # 3·x at x = -2, where 3·x² = 12 is right


@mt.custom_grad
def cube(x: mt.Tensor) -> tuple[mt.Tensor, VJP]:
    """x³; its derivative is 3·x²."""
    return x * x * x, lambda dy: dy * 3.0 * x * x  # fixed: 3·x², the VJP had 3·x


@mt.custom_grad
def softsign(x: mt.Tensor) -> tuple[mt.Tensor, VJP]:
    """x / (1 + |x|), a smooth step from -1 to 1; its derivative is 1 / (1 + |x|)²."""
    return x / (1.0 + mt.abs(x)), lambda dy: dy / ((1.0 + mt.abs(x)) * (1.0 + mt.abs(x)))


def energy(x: mt.Tensor) -> mt.Tensor:
    """The sum of 2·softsign(x³)."""
    return (softsign(cube(x)) * 2.0).sum()
