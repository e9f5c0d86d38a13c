"""Solution: exercise 4, the VJP of softplus with ``mt.custom_grad``, proven by ``mt.check_grads`` (chapter 4).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex04_softplus_vjp.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04_softplus_vjp"  # the grader reads this: do not change it


@mt.custom_grad
def softplus(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
    """softplus(x) = log(1 + eˣ); its derivative is eˣ / (1 + eˣ) = sigmoid(x)."""
    value = mt.log(1.0 + mt.exp(x))

    def grad_fn(dy: mt.Tensor) -> list[mt.Tensor]:
        # Written with microtape ops, so an outer tape can differentiate it again.
        return [dy * mt.sigmoid(x)]

    return value, grad_fn


def prove() -> mt.GradCheckReport:
    """Check first and second derivatives against finite differences."""
    x = mt.tensor([-3.0, -1.0, 0.0, 0.5, 2.0])
    return mt.check_grads(softplus, [x], order=2)
