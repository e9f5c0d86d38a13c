"""Solution: exercise 8d, a custom gradient with no second derivative (chapter 8).

``check_grads`` passes at order 1 and fails at order 2. The saved x² is a
value the outer derivative does not follow back to ``x``: to it the rule
dy · 3 · saved is linear in dy and constant in x, so the second derivative
comes out 0 instead of 6x. Writing the rule with ops on ``x`` itself
(a closure over ``x``) records them, and the outer tape differentiates them.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex08d_second_derivative.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex08d_second_derivative"  # the grader reads this: do not change it

X = mt.tensor([0.5, -1.5, 2.0])

ORDER_2_VERDICT = "FAILED"


def cube_op(x: mt.Tensor) -> mt.Tensor:
    """x³, with the hand-written gradient of ``cube``."""

    def cube(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
        """x³, and its VJP: dy times 3x²."""
        return x * x * x, lambda dy: dy * 3.0 * x * x  # ops on x: the outer derivative follows them

    op: Callable[[mt.Tensor], mt.Tensor] = mt.custom_grad(cube)
    return op(x)


if __name__ == "__main__":
    print(mt.check_grads(lambda t: cube_op(t).sum(), [X]).verdict)
