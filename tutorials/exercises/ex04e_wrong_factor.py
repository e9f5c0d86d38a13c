"""Exercise 4e: find the wrong factor with explain_gradient, and fix it.

Chapter 4, "Checking gradients" (Проверка градиентов), section "Why is the gradient wrong?".

``energy`` below chains two ops with hand-written gradients
(``mt.custom_grad``), and its gradient is wrong. By the chain rule, an
entry of the gradient is a sum over the paths from the output back to that
entry, each path the product of the local derivatives of its ops.
``mt.explain_gradient`` lists those paths, with every step's op, local
derivative and line, so a wrong factor can be read off the table.

1. Explain entry 2 of the gradient at ``X`` and read the path::

       why = mt.explain_gradient(energy, [X], index=2)
       print(why)

   Compare each step's local derivative with the derivative of that op at
   the value the op saw. Set ``WRONG_OP`` to the name of the op whose
   factor is wrong, as the table prints it, and ``WRONG_FACTOR`` to the
   local derivative the table shows for it.
2. Fix that op's VJP. Change only its gradient, not its forward value.
   Afterwards ``mt.check_grads(energy, [X]).ok`` is True.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex04e_wrong_factor.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04e_wrong_factor"  # the grader reads this: do not change it

VJP = Callable[[mt.Tensor], mt.Tensor]  # grad_fn(dy)

X = mt.tensor([0.5, 1.5, -2.0])

WRONG_OP = "TODO 1: the op name, as explain_gradient's table prints it"
WRONG_FACTOR = 0.0  # TODO 1: the local derivative the table shows for that op


@mt.custom_grad
def cube(x: mt.Tensor) -> tuple[mt.Tensor, VJP]:
    """x³."""
    return x * x * x, lambda dy: dy * 3.0 * x


@mt.custom_grad
def softsign(x: mt.Tensor) -> tuple[mt.Tensor, VJP]:
    """x / (1 + |x|), a smooth step from -1 to 1."""
    return x / (1.0 + mt.abs(x)), lambda dy: dy / ((1.0 + mt.abs(x)) * (1.0 + mt.abs(x)))


def energy(x: mt.Tensor) -> mt.Tensor:
    """The sum of 2·softsign(x³)."""
    return (softsign(cube(x)) * 2.0).sum()


if __name__ == "__main__":
    print(mt.explain_gradient(energy, [X], index=2))
