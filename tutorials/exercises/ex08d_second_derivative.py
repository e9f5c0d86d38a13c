"""Exercise 8d: a custom gradient that is right once and wrong twice.

Chapter 8, "Casebook: real gradient bugs", section "Case 14: a custom gradient with no second derivative".

``cube_op`` is x³ with a hand-written gradient (``mt.custom_grad``). Its
rule reads a value saved in the forward pass. The first derivative is
right; a Newton step, which needs the second derivative, goes wrong.

1. Check ``cube_op(x).sum()`` at ``X`` with ``mt.check_grads``, first with
   the default order, then with ``order=2``, and set ``ORDER_2_VERDICT`` to
   the second verdict, as it prints.
2. Repair the rule so that the second derivative is right too: the outer
   derivative must see how the rule depends on ``x``. Keep the forward
   value x³.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex08d_second_derivative.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex08d_second_derivative"  # the grader reads this: do not change it

X = mt.tensor([0.5, -1.5, 2.0])

ORDER_2_VERDICT = "TODO 1: the verdict of check_grads at order=2"


def cube_op(x: mt.Tensor) -> mt.Tensor:
    """x³, with the hand-written gradient of ``cube``."""

    def cube(x: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[..., mt.Tensor]]:
        """x³, and its VJP: dy times 3x²."""
        save([x * x])
        return x * x * x, lambda dy, saved: dy * 3.0 * saved[0]  # TODO 2: the saved value is a constant to the outer derivative

    op: Callable[[mt.Tensor], mt.Tensor] = mt.custom_grad(cube)
    return op(x)


if __name__ == "__main__":
    print(mt.check_grads(lambda t: cube_op(t).sum(), [X]).verdict)
